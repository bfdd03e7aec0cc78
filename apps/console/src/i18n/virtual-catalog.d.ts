// A language's catalogue, compiled at build by i18n-catalogs.ts: the first page's texts and loaders of the other parts.
declare module 'virtual:postern-catalog/*' {
  import type { Messages } from './runtime';

  export const first: Messages;
  export const signin: () => Promise<{ default: Messages }>;
  export const home: () => Promise<{ default: Messages }>;
  export const more: () => Promise<{ default: Messages }>;
}
