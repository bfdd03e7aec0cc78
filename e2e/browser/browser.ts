import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { repoRoot } from './server.js';

export const screenshotDir = join(repoRoot, 'artifacts/screenshots');

export async function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    // The machine's network is closed: background services would only produce refused connections.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

export const viewports = {
  desktop: { width: 1366, height: 860 },
  phone: { width: 390, height: 844 },
} as const;

/**
 * Stores a screenshot of the current screen under artifacts/screenshots/<name>.png. A full-page shot resizes the
 * viewport for a moment, which closes open menus (they close on resize): take those with `fullPage: false`.
 */
export async function snap(page: Page, name: string, { fullPage = true }: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await settleTransitions(page);
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage });
}

/** Waits for running CSS transitions and finite animations (a sliding sidebar, a fading dialog) to end. */
export async function settleTransitions(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const finite = document
      .getAnimations()
      .filter((animation) => animation.effect?.getComputedTiming().iterations !== Infinity);
    await Promise.all(finite.map((animation) => animation.finished.catch(() => undefined)));
  });
}
