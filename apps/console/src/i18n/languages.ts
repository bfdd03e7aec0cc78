import type { Catalogue } from './runtime';

/**
 * The console's languages. Adding one is one file plus one line: its catalogue `catalogs/<code>.json` (the keys of
 * `catalogs/en.json`, translated) and its line here, named in its own language. The catalogue check
 * (catalogs.test.ts) fails while the file misses a key or has one English no longer has.
 */
export const languages = [
  { code: 'en', name: 'English', load: () => import('virtual:postern-catalog/en') },
  { code: 'de', name: 'Deutsch', load: () => import('virtual:postern-catalog/de') },
  { code: 'fr', name: 'Français', load: () => import('virtual:postern-catalog/fr') },
  { code: 'es', name: 'Español', load: () => import('virtual:postern-catalog/es') },
  { code: 'pt-BR', name: 'Português (Brasil)', load: () => import('virtual:postern-catalog/pt-BR') },
  { code: 'zh-CN', name: '简体中文', load: () => import('virtual:postern-catalog/zh-CN') },
  { code: 'ja', name: '日本語', load: () => import('virtual:postern-catalog/ja') },
] as const satisfies readonly {
  code: string;
  name: string;
  /** The catalogue, compiled at build: the first page's texts and loaders of the other parts (parts.ts). */
  load: () => Promise<Catalogue>;
}[];

export type LanguageCode = (typeof languages)[number]['code'];
