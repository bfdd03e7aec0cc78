import type { Page } from 'playwright-core';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectVisible, startConsole, type ConsoleHarness } from './fixture.js';

// The JavaScript a browser really loads for a first visit (at most 128 KiB gzipped): every script
// index.html references (entry and module preloads) plus whatever the first route pulls in before it has
// rendered. Measured per first page: /login for a visitor without a session, / (home) for a signed-in one.

const BUDGET_BYTES = 128 * 1024;
/** No script for this long after the page showed: it has loaded what its first view needs. */
const SCRIPTS_SETTLED_MS = 1000;

/** Script URLs named in the served index.html. */
async function indexScripts(baseUrl: string): Promise<string[]> {
  const html = await (await fetch(`${baseUrl}/`)).text();
  const urls = [...html.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+\.js)"/g)].map(
    (match) => new URL(match[1] ?? '', baseUrl).href,
  );
  if (urls.length === 0) throw new Error(`index.html references no script:\n${html}`);
  return urls;
}

async function gzippedSize(url: string): Promise<number> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return gzipSync(Buffer.from(await response.arrayBuffer())).length;
}

/** Opens `path` in a fresh context, waits for `rendered`, and returns the script URLs loaded on the way. */
async function scriptsLoadedFor(
  harness: ConsoleHarness,
  path: string,
  isSignedIn: boolean,
  rendered: (page: Page) => Promise<void>,
): Promise<Set<string>> {
  const loaded = new Set<string>();
  let lastScriptAt = Date.now();
  const page = await harness.openPage('about:blank', { isSignedIn });
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'script') return;
    loaded.add(response.url());
    lastScriptAt = Date.now();
  });
  await page.goto(path);
  await rendered(page);
  // What the page goes on to load once it shows counts too (the home overview, its texts): until no script has
  // arrived for a second, so the figure does not depend on which chunk won the race against the heading.
  const deadline = Date.now() + 15_000;
  while (Date.now() - lastScriptAt < SCRIPTS_SETTLED_MS) {
    if (Date.now() > deadline) throw new Error(`${path}: scripts still loading after 15 s`);
    await page.waitForTimeout(100);
  }
  return loaded;
}

describe('initial JavaScript size', () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  });

  afterAll(async () => {
    await harness.close();
  });

  it.each([
    {
      route: '/login',
      isSignedIn: false,
      rendered: (page: Page) => expectVisible(page.getByRole('button', { name: 'Sign in' })),
    },
    {
      route: '/',
      isSignedIn: true,
      rendered: (page: Page) => expectVisible(page.getByRole('heading', { name: 'Welcome to Postern' })),
    },
  ])('a first visit to $route loads at most 128 KiB of gzipped JavaScript', async ({ route, isSignedIn, rendered }) => {
    const urls = new Set([
      ...(await indexScripts(harness.server.baseUrl)),
      ...(await scriptsLoadedFor(harness, route, isSignedIn, rendered)),
    ]);
    const sizes = await Promise.all(
      [...urls].map(async (url) => ({ file: new URL(url).pathname, bytes: await gzippedSize(url) })),
    );
    const total = sizes.reduce((sum, { bytes }) => sum + bytes, 0);
    const lines = sizes
      .sort((a, b) => b.bytes - a.bytes)
      .map(({ file, bytes }) => `  ${(bytes / 1024).toFixed(1).padStart(6)} KiB  ${file}`);
    console.log(
      `initial JS for ${route}: ${(total / 1024).toFixed(1)} KiB gzipped (budget 128 KiB), ${sizes.length} files\n${lines.join('\n')}`,
    );
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
