import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// The server's Content-Security-Policy allows scripts from the console's own origin only (script-src 'self', no
// 'unsafe-inline'): an inline script or handler in the page shell would simply not run.

const indexHtml = readFileSync(join(import.meta.dirname, '../index.html'), 'utf8');

describe('index.html under the Content-Security-Policy', () => {
  it('has no inline script, inline event handler or javascript: URL', () => {
    const scripts = [...indexHtml.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes = '', body = ''] of scripts) {
      expect(attributes).toMatch(/\ssrc="\/[^"]+"/);
      expect(body.trim()).toBe('');
    }
    expect(indexHtml).not.toMatch(/\son[a-z]+\s*=/i);
    expect(indexHtml).not.toMatch(/javascript:/i);
  });

  it('applies the theme from its own file (public/theme-init.js), not inline', () => {
    expect(indexHtml).toContain('<script src="/theme-init.js"></script>');
    expect(readFileSync(join(import.meta.dirname, '../public/theme-init.js'), 'utf8')).toContain(
      "localStorage.getItem('theme')",
    );
  });
});
