// Pure checks behind deploy-files.test.ts: they read deploy file text and return what is wrong, so the test can run
// them on the real files and on deliberately broken samples (proof that each check can fail).
import { LineCounter, isMap, parseDocument } from 'yaml';
import type { YAMLMap } from 'yaml';

export interface DockerInstruction {
  keyword: string;
  args: string;
  line: number;
}

/**
 * Splits a Dockerfile into instructions: joins `\` continuations, drops comments, blank lines and parser directives.
 */
export function parseDockerfile(text: string): DockerInstruction[] {
  const instructions: DockerInstruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending !== '' && line.startsWith('#')) return; // comment lines inside a continuation are skipped by Docker too
    if (pending === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = pending + line;
    pending = '';
    const match = /^(\S+)\s*(.*)$/s.exec(full);
    if (match?.[1] !== undefined) {
      instructions.push({ keyword: match[1].toUpperCase(), args: match[2] ?? '', line: startLine });
    }
  });
  return instructions;
}

export interface CopySource {
  path: string;
  line: number;
  fromStage?: string;
}

/** The sources of every COPY/ADD; `fromStage` is set for `--from=stage` copies, which do not read the build context. */
export function listCopySources(instructions: DockerInstruction[]): CopySource[] {
  const sources: CopySource[] = [];
  for (const { keyword, args, line } of instructions) {
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const words = args.split(/\s+/).filter((word) => word !== '');
    const flags = words.filter((word) => word.startsWith('--'));
    const rest = words.filter((word) => !word.startsWith('--'));
    const paths = rest[0]?.startsWith('[') ? (JSON.parse(rest.join(' ')) as string[]) : rest;
    const fromStage = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
    for (const path of paths.slice(0, -1)) sources.push({ path, line, ...(fromStage ? { fromStage } : {}) });
  }
  return sources;
}

/** Names given to stages with `FROM image AS name`. */
export function listStageNames(instructions: DockerInstruction[]): string[] {
  return instructions
    .filter(({ keyword }) => keyword === 'FROM')
    .map(({ args }) => /\sAS\s+(\S+)/i.exec(args)?.[1])
    .filter((name): name is string => name !== undefined);
}

/**
 * Whether a .dockerignore excludes a context path. Covers the pattern forms our ignore files use (`name`, `dir/name`,
 * `**` + `/name`, `**` + `/*.ext`, no `!` exceptions): a pattern excludes the path or any of its parent directories.
 */
export function isIgnoredByDockerignore(ignoreText: string, path: string): boolean {
  const patterns = ignoreText
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const segments = path.replace(/^\.\//, '').split('/');
  const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join('/'));
  // Docker's rule: the last pattern that matches the path (or a directory above it) decides; `!` re-includes.
  let isIgnored = false;
  for (const line of patterns) {
    const isException = line.startsWith('!');
    const pattern = isException ? line.slice(1) : line;
    const anyDepth = pattern.startsWith('**/');
    const body = anyDepth ? pattern.slice(3) : pattern;
    const regex = new RegExp(`^${body.split('*').map(escapeRegExp).join('[^/]*')}$`);
    const matches = anyDepth
      ? prefixes.some((prefix) => regex.test(prefix.split('/').slice(-body.split('/').length).join('/')))
      : prefixes.some((prefix) => regex.test(prefix));
    if (matches) isIgnored = !isException;
  }
  return isIgnored;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Makes a Helm template parseable as YAML without Helm (none on these machines), in two documented steps:
 * 1. a line holding nothing but template actions (`{{- if … }}`, `{{- end }}`, `{{- include … | nindent 4 }}`) is
 *    removed: those lines only switch or inject blocks, so the lines around them must be valid YAML on their own;
 * 2. every other action is replaced by the scalar `TEMPLATE`, so `port: {{ $port }}` becomes `port: TEMPLATE`.
 * Both branches of an if/else stay in the text: templates must not repeat a key across branches (YAML rejects it).
 */
export function toParsableYaml(template: string): string {
  return template
    .split('\n')
    .filter((line) => !/^\s*(\{\{.*?\}\}\s*)+$/.test(line))
    .map((line) => line.replace(/\{\{.*?\}\}/g, 'TEMPLATE'))
    .join('\n');
}

/** Structural problems of a Helm template: an action not closed on its line, or blocks and `end`s that do not pair. */
export function findTemplateProblems(template: string): string[] {
  const problems: string[] = [];
  let openBlocks = 0;
  template.split('\n').forEach((line, index) => {
    const opens = line.split('{{').length - 1;
    const closes = line.split('}}').length - 1;
    if (opens !== closes) problems.push(`line ${index + 1}: ${opens} "{{" but ${closes} "}}"`);
    for (const [, keyword] of line.matchAll(/\{\{-?\s*(if|range|with|define|block|end)\b/g)) {
      openBlocks += keyword === 'end' ? -1 : 1;
      if (openBlocks < 0) problems.push(`line ${index + 1}: "end" without an open block`);
    }
  });
  if (openBlocks > 0) problems.push(`${openBlocks} block(s) without "end"`);
  return problems;
}

/** Every `.Values.a.b` path a template refers to. */
export function listValueReferences(template: string): string[] {
  return [...template.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)].map(([, path]) => (path ?? '').slice(1));
}

export interface ValueKey {
  path: string;
  /** 1-based line of the key in values.yaml */
  line: number;
  /** true when the value is a map with keys of its own */
  hasChildren: boolean;
}

/** The keys of a values.yaml, nested maps as dotted paths (lists are values: their items are not keys). */
export function listValueKeys(valuesText: string): ValueKey[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(valuesText, { lineCounter });
  if (doc.errors.length > 0) throw new Error(doc.errors.map((error) => error.message).join('\n'));
  const keys: ValueKey[] = [];
  const walk = (map: YAMLMap, prefix: string): void => {
    for (const pair of map.items) {
      const keyNode = pair.key as { value?: unknown; range?: [number, number, number] };
      const path = `${prefix}${String(keyNode.value)}`;
      const hasChildren = isMap(pair.value) && pair.value.items.length > 0;
      keys.push({ path, line: lineCounter.linePos(keyNode.range?.[0] ?? 0).line, hasChildren });
      if (isMap(pair.value)) walk(pair.value, `${path}.`);
    }
  };
  if (isMap(doc.contents)) walk(doc.contents, '');
  return keys;
}

/** Keys of a values.yaml without a comment line directly above them, at the key's own indentation. */
export function findUndocumentedKeys(valuesText: string): string[] {
  const lines = valuesText.split('\n');
  return listValueKeys(valuesText)
    .filter(({ line }) => {
      const keyLine = lines[line - 1] ?? '';
      const above = lines[line - 2] ?? '';
      const indent = /^\s*/.exec(keyLine)?.[0] ?? '';
      return !above.startsWith(`${indent}#`) || /^\s/.test(above.slice(indent.length));
    })
    .map(({ path }) => path);
}

/** Keys of a values.yaml that a chart README's values table (rows starting with | `key` |) does not list. */
export function findKeysMissingFromReadme(valuesText: string, readme: string): string[] {
  const listed = new Set([...readme.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map(([, key]) => key));
  return listValueKeys(valuesText)
    .map(({ path }) => path)
    .filter((path) => !listed.has(path));
}

/** Values no template uses: leaves that are neither referenced themselves nor inside a referenced map. */
export function findUnusedValues(valuesText: string, references: string[]): string[] {
  return listValueKeys(valuesText)
    .filter(({ hasChildren }) => !hasChildren)
    .map(({ path }) => path)
    .filter((path) => !references.some((ref) => path === ref || path.startsWith(`${ref}.`)));
}

/** References to values that values.yaml does not define (a typo renders as empty in Helm, silently). */
export function findUndefinedReferences(valuesText: string, references: string[]): string[] {
  const defined = new Set(listValueKeys(valuesText).map(({ path }) => path));
  return [...new Set(references)].filter((ref) => !defined.has(ref));
}
