// The checks of deploy-files.test.ts on broken samples: each one reports the defect it exists to catch.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  findKeysMissingFromReadme,
  findTemplateProblems,
  findUndefinedReferences,
  findUndocumentedKeys,
  findUnusedValues,
  isIgnoredByDockerignore,
  listCopySources,
  listStageNames,
  listValueReferences,
  parseDockerfile,
  toParsableYaml,
} from './deploy-checks.js';

const dockerfile = `# syntax=docker/dockerfile:1
FROM node:22-bookworm AS build
COPY package.json \\
     pnpm-lock.yaml ./
# a comment
RUN echo one \\
 && echo two
FROM node:22-bookworm-slim
COPY --from=build --chown=root:root /out /app
COPY ["deploy/a file.sh", "/usr/local/bin/"]
`;

describe('Dockerfile reading', () => {
  it('joins continued lines and lists copy sources with their stage', () => {
    const instructions = parseDockerfile(dockerfile);
    expect(instructions.map(({ keyword }) => keyword)).toEqual(['FROM', 'COPY', 'RUN', 'FROM', 'COPY', 'COPY']);
    expect(listStageNames(instructions)).toEqual(['build']);
    expect(listCopySources(instructions)).toEqual([
      { path: 'package.json', line: 3 },
      { path: 'pnpm-lock.yaml', line: 3 },
      { path: '/out', line: 9, fromStage: 'build' },
      { path: 'deploy/a file.sh', line: 10 },
    ]);
  });

  it('tells which context paths a .dockerignore excludes', () => {
    const ignore = '# comment\n**/node_modules\n**/*.tsbuildinfo\ndata\n';
    expect(isIgnoredByDockerignore(ignore, 'apps/server/node_modules/x.js')).toBe(true);
    expect(isIgnoredByDockerignore(ignore, 'node_modules')).toBe(true);
    expect(isIgnoredByDockerignore(ignore, 'apps/cli/tsconfig.tsbuildinfo')).toBe(true);
    expect(isIgnoredByDockerignore(ignore, 'data/db.sqlite')).toBe(true);
    expect(isIgnoredByDockerignore(ignore, 'apps/data/x')).toBe(false);
    expect(isIgnoredByDockerignore(ignore, 'scripts/install-deps.sh')).toBe(false);
    // An exception after a wider pattern brings a directory back, and the last matching line decides.
    const withException = `${ignore}**/dist\n!apps/cli/dist/release\n`;
    expect(isIgnoredByDockerignore(withException, 'apps/cli/dist/release/SHA256SUMS')).toBe(false);
    expect(isIgnoredByDockerignore(withException, 'apps/cli/dist/postern.mjs')).toBe(true);
    expect(isIgnoredByDockerignore(`${withException}apps/cli/dist/release/*.gz\n`, 'apps/cli/dist/release/a.gz')).toBe(
      true,
    );
  });
});

describe('Helm template checks', () => {
  it('turns a template into YAML that parses, and keeps a broken one broken', () => {
    const template = `spec:
  {{- if .Values.a }}
  replicas: {{ .Values.a }}
  {{- end }}
  labels:
    {{- include "x.labels" . | nindent 4 }}
`;
    expect(toParsableYaml(template)).toBe('spec:\n  replicas: TEMPLATE\n  labels:\n');
    const broken = 'spec:\n  replicas: {{ .Values.a }}\n   name: x\n';
    expect(parseAllDocuments(toParsableYaml(broken))[0]?.errors.length).toBeGreaterThan(0);
  });

  it('reports unclosed actions and unpaired blocks', () => {
    expect(findTemplateProblems('{{- if .Values.a }}\nx: 1\n{{- end }}\n')).toEqual([]);
    expect(findTemplateProblems('{{- if .Values.a }}\nx: {{ .Values.b }\n')).toEqual([
      'line 2: 1 "{{" but 0 "}}"',
      '1 block(s) without "end"',
    ]);
    expect(findTemplateProblems('{{- end }}\n')).toEqual(['line 1: "end" without an open block']);
  });
});

describe('values checks', () => {
  const values = `# Image.
image:
  # Repository.
  repository: x
  tag: ""

# Resources.
resources: {}
`;

  it('finds keys without a comment directly above them', () => {
    expect(findUndocumentedKeys(values)).toEqual(['image.tag']);
    expect(findUndocumentedKeys('# Image.\n\nimage: x\n')).toEqual(['image']);
    // A comment at another indentation belongs to something else.
    expect(findUndocumentedKeys('# A.\na:\n# B.\n  b: 1\n')).toEqual(['a.b']);
  });

  it('finds keys the README table does not list', () => {
    const readme = '| Key | Default |\n|---|---|\n| `image` | |\n| `image.repository` | `x` |\n| `resources` | |\n';
    expect(findKeysMissingFromReadme(values, readme)).toEqual(['image.tag']);
  });

  it('finds values no template uses and references values.yaml does not define', () => {
    const refs = listValueReferences(
      'image: {{ .Values.image.repository }} {{ toYaml $.Values.resources }} {{ .Values.imag.tag }}',
    );
    expect(refs).toEqual(['image.repository', 'resources', 'imag.tag']);
    expect(findUnusedValues(values, refs)).toEqual(['image.tag']);
    expect(findUndefinedReferences(values, refs)).toEqual(['imag.tag']);
  });
});
