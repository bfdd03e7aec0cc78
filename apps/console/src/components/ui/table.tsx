import type { ReactNode, TdHTMLAttributes, ThHTMLAttributes } from 'react';

// Plain table parts with shared styles; features compose them (a column-config abstraction would not pay off here).

export function Table({ children, minHeight }: { children: ReactNode; minHeight?: string }) {
  return (
    <div className="relative overflow-x-auto" style={minHeight ? { minHeight } : undefined}>
      <table className="min-w-full divide-y divide-gray-200 text-left text-sm dark:divide-gray-800">{children}</table>
    </div>
  );
}

export function THead({ children }: { children: ReactNode }) {
  return (
    <thead className="bg-gray-50 text-xs font-semibold tracking-wide text-gray-500 uppercase dark:bg-gray-800/50 dark:text-gray-400">
      <tr>{children}</tr>
    </thead>
  );
}

/** Cells do not wrap unless their classes say how (`whitespace-normal`): two whitespace utilities would conflict. */
const wrapping = (className: string): string => (/(^|\s)whitespace-/.test(className) ? '' : 'whitespace-nowrap');

export function Th({ children, className = '', ...props }: ThHTMLAttributes<HTMLTableCellElement>) {
  return (
    <th scope="col" className={`px-4 py-2.5 ${wrapping(className)} ${className}`} {...props}>
      {children}
    </th>
  );
}

export function TBody({ children }: { children: ReactNode }) {
  return <tbody className="divide-y divide-gray-100 dark:divide-gray-800">{children}</tbody>;
}

export function Tr({ children, className = '' }: { children: ReactNode; className?: string }) {
  return <tr className={`hover:bg-gray-50 dark:hover:bg-gray-800/40 ${className}`}>{children}</tr>;
}

export function Td({ children, className = '', ...props }: TdHTMLAttributes<HTMLTableCellElement>) {
  return (
    <td className={`px-4 py-2.5 ${wrapping(className)} ${className}`} {...props}>
      {children}
    </td>
  );
}
