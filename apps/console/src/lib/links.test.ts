import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { links } from './links';

// Every link into the repository names a file (and heading) of this checkout: the welcome page's Documentation and
// Docker links once pointed at headings that did not exist.

const root = join(__dirname, '..', '..', '..', '..');
const prefix = 'https://github.com/postern/postern/blob/main/';

/** GitHub's heading anchors: lower case, punctuation dropped (hyphens kept), spaces become hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const headingsOf = (markdown: string): string[] =>
  markdown
    .split('\n')
    .filter((line) => /^#{1,6}\s/.test(line))
    .map((line) => headingSlug(line.replace(/^#+\s*/, '')));

describe('links into the repository', () => {
  it('slugs headings as GitHub does', () => {
    expect(headingSlug('1. Docker Compose')).toBe('1-docker-compose');
    expect(headingSlug('2. Kubernetes with Helm')).toBe('2-kubernetes-with-helm');
    expect(headingSlug("Installing on a node: the gateway's one-line install")).toBe(
      'installing-on-a-node-the-gateways-one-line-install',
    );
  });

  it('keeps every link to the repository on the repository the README clones', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`git clone ${links.sourceRepository}.git`);
  });

  it.each(Object.entries(links).filter(([, url]) => url.startsWith(prefix)))(
    '%s names a file and heading that exist',
    (_, url) => {
      const [path = '', heading] = url.slice(prefix.length).split('#');
      expect(existsSync(join(root, path)), `${path} exists`).toBe(true);
      if (!heading) return;
      expect(headingsOf(readFileSync(join(root, path), 'utf8'))).toContain(heading);
    },
  );
});
