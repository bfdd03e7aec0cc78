import type { ReactNode } from 'react';
import { Button } from './button';

export function EmptyState({
  title,
  description,
  actionLabel,
  onAction,
  icon,
}: {
  title: string;
  description?: ReactNode;
  actionLabel?: string;
  onAction?: () => void;
  icon?: ReactNode;
}) {
  return (
    <div className="flex flex-col items-center justify-center gap-2 px-4 py-10 text-center">
      {icon && <div className="text-3xl text-gray-400">{icon}</div>}
      <p className="text-sm font-semibold">{title}</p>
      {description && <p className="max-w-md text-sm text-gray-500 dark:text-gray-400">{description}</p>}
      {actionLabel && onAction && (
        <Button className="mt-2" onClick={onAction}>
          {actionLabel}
        </Button>
      )}
    </div>
  );
}
