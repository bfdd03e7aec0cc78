import { storageKeys, type Theme } from '@postern/contract';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { launchBrowser, viewports } from './browser.js';
import { api, apiLogin, startServer } from './server.js';

// One server and one browser per test file. Each page gets its own browser context (fresh cookies and local
// storage), so tests do not see each other's session or theme.

export interface PageOptions {
  viewport?: keyof typeof viewports;
  /** Theme stored before the first load (the page may change it). */
  theme?: Theme;
  /** Start with the session cookie the server sets on sign-in (default true): the page restores the session from it. */
  isSignedIn?: boolean;
  /** The browser's language (navigator.languages), default en-US: the machine's own never changes what tests read. */
  locale?: string;
}

/** Where the console is served: the browser tests' own server, or the real gateway of the log tests. */
export interface ConsoleOrigin {
  baseUrl: string;
  /** The gateway's data directory, when the harness started the server itself. */
  dataDir?: string;
  stop(): Promise<void>;
}

export interface ConsoleHarness {
  readonly server: ConsoleOrigin;
  readonly browser: Browser;
  /** Session token for seeding through the API. */
  readonly token: string;
  seed<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A new page in its own context, at `path` once the app has rendered. */
  openPage(path: string, options?: PageOptions): Promise<Page>;
  /**
   * Uncaught errors thrown in any page so far, and anything the Content-Security-Policy blocked: a crash or a
   * missing script or style the user would see as a broken screen.
   */
  readonly pageErrors: string[];
  /** Closes the browser and stops the origin. */
  close(): Promise<void>;
}

/** Starts a browser against `origin` (default: a new server from server.ts); the harness owns both. */
export async function startConsole(origin?: ConsoleOrigin): Promise<ConsoleHarness> {
  const server = origin ?? (await startServer());
  let browser: Browser | undefined;
  let token: string;
  try {
    browser = await launchBrowser();
    token = await apiLogin(server.baseUrl);
  } catch (error) {
    await browser?.close();
    await server.stop();
    throw error;
  }
  const contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  const openPage = async (
    path: string,
    { viewport = 'desktop', theme, isSignedIn = true, locale = 'en-US' }: PageOptions = {},
  ): Promise<Page> => {
    const context = await browser.newContext({
      baseURL: server.baseUrl,
      viewport: viewports[viewport],
      colorScheme: theme === 'dark' ? 'dark' : 'light',
      locale,
    });
    contexts.push(context);
    if (theme) {
      // The starting theme only: a choice made in the page survives reloads.
      await context.addInitScript(
        ([key, value]) => {
          if (localStorage.getItem(key) === null) localStorage.setItem(key, value);
        },
        [storageKeys.theme, theme] as const,
      );
    }
    if (isSignedIn) {
      // The cookie the server sets on sign-in (docs/api.md "Session cookie"): same name, path and attributes.
      const { hostname } = new URL(server.baseUrl);
      await context.addCookies([
        {
          name: storageKeys.tokenCookie,
          value: token,
          domain: hostname,
          path: '/api',
          httpOnly: true,
          sameSite: 'Strict',
        },
      ]);
    }
    const page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && message.text().includes('Content Security Policy'))
        pageErrors.push(`${page.url()}: CSP: ${message.text()}`);
    });
    await page.goto(path);
    return page;
  };

  return {
    server,
    browser,
    token,
    seed: (method, path, body) => api(server.baseUrl, token, method, path, body),
    openPage,
    pageErrors,
    async close() {
      await Promise.allSettled(contexts.map((context) => context.close()));
      await browser.close();
      await server.stop();
    },
  };
}

// Assertions on what the user sees. Locators auto-wait; these wait for a state with Playwright's own deadline.

const VISIBLE_TIMEOUT_MS = 10_000;

/** Options for `expect.poll` on what the page shows: vitest's default deadline (1 s) is short for a busy machine. */
export const UNTIL_SHOWN = { timeout: VISIBLE_TIMEOUT_MS, interval: 50 } as const;

export async function expectVisible(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'visible', timeout: VISIBLE_TIMEOUT_MS });
}

export async function expectGone(locator: Locator): Promise<void> {
  await locator.waitFor({ state: 'hidden', timeout: VISIBLE_TIMEOUT_MS });
}

/** Polls the URL path until it equals `path` (client-side navigations do not always fire load events). */
export async function expectPath(page: Page, path: string): Promise<void> {
  await expect.poll(() => new URL(page.url()).pathname, UNTIL_SHOWN).toBe(path);
}

export const dialog = (page: Page, title: string | RegExp): Locator =>
  page.getByRole('dialog', { name: title, exact: true });

/** A toast (top right) with exactly this message. */
export const toast = (page: Page, message: string): Locator =>
  page.getByRole('status').filter({ has: page.getByText(message, { exact: true }) });

/**
 * Opens the row menu labelled `label`. Its button is first scrolled to the middle of the window, and the
 * scroll events are let through first (as a user would scroll, then tap).
 */
export async function openMenu(page: Page, label: string | RegExp): Promise<Locator> {
  const button = page.getByRole('button', { name: label, exact: true });
  await button.evaluate((element) => element.scrollIntoView({ block: 'center', inline: 'nearest' }));
  await waitForPaint(page);
  await button.click();
  const menu = page.getByRole('menu', { name: label, exact: true });
  await expectVisible(menu);
  return menu;
}

/** Waits until the page has painted twice: scroll events caused before now have been dispatched. */
export async function waitForPaint(page: Page): Promise<void> {
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

/** Opens the row menu labelled `label` and picks `item`. */
export async function chooseMenuItem(page: Page, label: string | RegExp, item: string | RegExp): Promise<void> {
  const menu = await openMenu(page, label);
  await menu.getByRole('menuitem', { name: item, exact: true }).click();
}

/** Accepts the confirmation titled `title` with its button `accept`, after checking both texts. */
export async function acceptConfirmation(page: Page, title: string, accept: string): Promise<void> {
  const confirmation = dialog(page, title);
  await expectVisible(confirmation);
  await confirmation.getByRole('button', { name: accept, exact: true }).click();
  await expectGone(confirmation);
}

/** A unique suffix so names seeded by different tests never collide. */
export const uniqueName = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * The lifecycle most browser files share: one console (server + browser) for the file, started before its tests and
 * closed after them, and no uncaught page error after any test. Use the returned harness inside tests only.
 */
export function useConsoleHarness(): ConsoleHarness {
  let current: ConsoleHarness | undefined;
  const started = (): ConsoleHarness => {
    if (!current) throw new Error('the console is not started yet: use the harness inside a test');
    return current;
  };
  beforeAll(async () => {
    current = await startConsole();
  });
  afterEach(() => {
    expect(started().pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await current?.close();
  });
  return {
    get server() {
      return started().server;
    },
    get browser() {
      return started().browser;
    },
    get token() {
      return started().token;
    },
    get pageErrors() {
      return started().pageErrors;
    },
    seed: <T>(method: string, path: string, body?: unknown) => started().seed<T>(method, path, body),
    openPage: (path, options) => started().openPage(path, options),
    close: () => started().close(),
  };
}
