import type { SVGProps } from 'react';

// A handful of inline icons (24×24 outline paths) instead of an icon library: a few hundred bytes in total.

type IconProps = Omit<SVGProps<SVGSVGElement>, 'd'>;

function Icon({ d, ...props }: IconProps & { d: string }) {
  return (
    <svg
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={1.8}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      width="1em"
      height="1em"
      {...props}
    >
      <path d={d} />
    </svg>
  );
}

export const CheckIcon = (p: IconProps) => <Icon d="M5 13l4 4L19 7" {...p} />;
export const CopyIcon = (p: IconProps) => <Icon d="M8 8h11v11H8zM5 16H4V4h12v1" {...p} />;
export const CloseIcon = (p: IconProps) => <Icon d="M6 6l12 12M18 6L6 18" {...p} />;
export const DotsIcon = (p: IconProps) => <Icon d="M12 5h.01M12 12h.01M12 19h.01" strokeWidth={3} {...p} />;
export const ChevronLeftIcon = (p: IconProps) => <Icon d="M15 18l-6-6 6-6" {...p} />;
export const ChevronRightIcon = (p: IconProps) => <Icon d="M9 18l6-6-6-6" {...p} />;
export const ChevronDownIcon = (p: IconProps) => <Icon d="M6 9l6 6 6-6" {...p} />;
export const MenuIcon = (p: IconProps) => <Icon d="M4 6h16M4 12h16M4 18h16" {...p} />;
export const HomeIcon = (p: IconProps) => <Icon d="M3 11l9-8 9 8M5 9v11h14V9" {...p} />;
export const GlobeIcon = (p: IconProps) => (
  <Icon d="M12 3a9 9 0 100 18 9 9 0 000-18zM3 12h18M12 3c3 3 3 15 0 18M12 3c-3 3-3 15 0 18" {...p} />
);
export const ListIcon = (p: IconProps) => <Icon d="M8 6h13M8 12h13M8 18h13M3 6h.01M3 12h.01M3 18h.01" {...p} />;
export const ServerIcon = (p: IconProps) => <Icon d="M4 4h16v6H4zM4 14h16v6H4zM8 7h.01M8 17h.01" {...p} />;
export const SunIcon = (p: IconProps) => (
  <Icon
    d="M12 8a4 4 0 100 8 4 4 0 000-8zM12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4"
    {...p}
  />
);
export const MoonIcon = (p: IconProps) => <Icon d="M21 12.8A9 9 0 1111.2 3a7 7 0 009.8 9.8z" {...p} />;
export const MonitorIcon = (p: IconProps) => <Icon d="M3 4h18v12H3zM8 20h8M12 16v4" {...p} />;
export const HelpIcon = (p: IconProps) => (
  <Icon d="M12 21a9 9 0 100-18 9 9 0 000 18zM9.1 9a3 3 0 015.8 1c0 2-3 3-3 3M12 17h.01" {...p} />
);
export const LogoutIcon = (p: IconProps) => <Icon d="M15 17l5-5-5-5M20 12H9M12 21H5V3h7" {...p} />;
export const CodeIcon = (p: IconProps) => <Icon d="M8 16l-4-4 4-4M16 8l4 4-4 4M14 4l-4 16" {...p} />;
export const WarningIcon = (p: IconProps) => (
  <Icon d="M12 9v4M12 17h.01M10.3 3.9L1.8 18a2 2 0 001.7 3h17a2 2 0 001.7-3L13.7 3.9a2 2 0 00-3.4 0z" {...p} />
);
export const InfoIcon = (p: IconProps) => <Icon d="M12 21a9 9 0 100-18 9 9 0 000 18zM12 16v-4M12 8h.01" {...p} />;
export const CalendarIcon = (p: IconProps) => <Icon d="M4 5h16v16H4zM16 3v4M8 3v4M4 11h16" {...p} />;
export const PlusIcon = (p: IconProps) => <Icon d="M12 5v14M5 12h14" {...p} />;
export const TerminalIcon = (p: IconProps) => <Icon d="M4 17l6-5-6-5M12 19h8" {...p} />;
export const HeartIcon = (p: IconProps) => (
  <Icon d="M20.8 4.6a5.5 5.5 0 00-7.8 0L12 5.7l-1-1.1a5.5 5.5 0 00-7.8 7.8L12 21l8.8-8.6a5.5 5.5 0 000-7.8z" {...p} />
);
export const BookIcon = (p: IconProps) => (
  <Icon d="M4 19.5A2.5 2.5 0 016.5 17H20V3H6.5A2.5 2.5 0 004 5.5zM4 19.5A2.5 2.5 0 006.5 22H20v-5" {...p} />
);
export const UsersIcon = (p: IconProps) => (
  <Icon
    d="M16 21v-2a4 4 0 00-4-4H6a4 4 0 00-4 4v2M9 11a4 4 0 100-8 4 4 0 000 8zM22 21v-2a4 4 0 00-3-3.9M16 3.1a4 4 0 010 7.8"
    {...p}
  />
);
export const ShieldIcon = (p: IconProps) => <Icon d="M12 22s8-4 8-10V5l-8-3-8 3v7c0 6 8 10 8 10z" {...p} />;
export const SearchIcon = (p: IconProps) => <Icon d="M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zM21 21l-5-5" {...p} />;
export const LayersIcon = (p: IconProps) => <Icon d="M12 3l9 5-9 5-9-5 9-5zM3 13l9 5 9-5M3 17l9 5 9-5" {...p} />;
export const GearIcon = (p: IconProps) => (
  <Icon
    d="M12 15a3 3 0 100-6 3 3 0 000 6zM19.4 15a1.7 1.7 0 00.3 1.8l.1.1a2 2 0 11-2.8 2.8l-.1-.1a1.7 1.7 0 00-1.8-.3 1.7 1.7 0 00-1 1.5V21a2 2 0 11-4 0v-.1a1.7 1.7 0 00-1.1-1.5 1.7 1.7 0 00-1.8.3l-.1.1a2 2 0 11-2.8-2.8l.1-.1a1.7 1.7 0 00.3-1.8 1.7 1.7 0 00-1.5-1H3a2 2 0 110-4h.1a1.7 1.7 0 001.5-1.1 1.7 1.7 0 00-.3-1.8l-.1-.1a2 2 0 112.8-2.8l.1.1a1.7 1.7 0 001.8.3H9a1.7 1.7 0 001-1.5V3a2 2 0 114 0v.1a1.7 1.7 0 001 1.5 1.7 1.7 0 001.8-.3l.1-.1a2 2 0 112.8 2.8l-.1.1a1.7 1.7 0 00-.3 1.8V9a1.7 1.7 0 001.5 1H21a2 2 0 110 4h-.1a1.7 1.7 0 00-1.5 1z"
    {...p}
  />
);
