import { messages } from '@postern/contract';
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import {
  dialog,
  expectGone,
  expectPath,
  expectVisible,
  uniqueName,
  UNTIL_SHOWN,
  useConsoleHarness,
} from './fixture.js';
import { ADMIN } from './server.js';

// Each flow below is done with Tab, Shift+Tab, Enter, Space, Escape
// and the arrow keys only, from a page load on. After every key the focus is somewhere a user can see, never on
// <body>; dialogs take focus when they open and hand it back to their opener when they close.

/** The focused element as `tag:name` (its aria-label, its label's text, or its text), or `body`. */
const focused = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return 'body';
    const labelled = el instanceof HTMLInputElement || el instanceof HTMLSelectElement ? el.labels?.[0] : undefined;
    const name = el.getAttribute('aria-label') ?? labelled?.textContent ?? el.textContent;
    return `${el.tagName.toLowerCase()}:${name.trim()}`;
  });

/** Presses `key` and checks that focus did not fall to <body>. */
async function press(page: Page, key: string): Promise<string> {
  await page.keyboard.press(key);
  const now = await focused(page);
  expect(now, `focus after ${key}`).not.toBe('body');
  return now;
}

/**
 * Presses Tab (or Shift+Tab) until the focused element is `target` (`tag:name`, or a pattern), checking after each
 * press that focus is not on <body>. A user would Tab the same way; more than `max` presses is a failure.
 */
async function tabTo(page: Page, target: string | RegExp, { back = false, max = 60 } = {}): Promise<void> {
  const passed: string[] = [];
  for (let i = 0; i < max; i++) {
    const now = await press(page, back ? 'Shift+Tab' : 'Tab');
    if (typeof target === 'string' ? now === target : target.test(now)) return;
    passed.push(now);
  }
  throw new Error(`Tab never reached ${String(target)}; passed ${passed.join(' → ')}`);
}

/** Waits until focus is on `target` (focus moved by the page itself: a route change, a dialog opening or closing). */
const expectFocus = (page: Page, target: string | RegExp) =>
  typeof target === 'string'
    ? expect.poll(() => focused(page), UNTIL_SHOWN).toBe(target)
    : expect.poll(() => focused(page), UNTIL_SHOWN).toMatch(target);

describe('keyboard-only walks', () => {
  const harness = useConsoleHarness();

  it('node → token → copy: opens a node, creates a token, copies it, and focus returns to the opener', async () => {
    const name = uniqueName('walk');
    await harness.seed('POST', '/api/nodes', { name });
    const page = await harness.openPage(`/nodes?q=${name}`);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness.server.baseUrl });
    await expectVisible(page.getByRole('link', { name }));

    await tabTo(page, `a:${name}`);
    await press(page, 'Enter');
    await expectVisible(page.getByRole('heading', { level: 1, name }));
    await expectFocus(page, `h1:${name}`);

    await tabTo(page, 'button:+ Add Token');
    await press(page, 'Enter');
    const form = dialog(page, 'Access Token Configuration');
    await expectVisible(form);
    await expectFocus(page, /^input:Name/);
    // Enter on the empty form: the error is on the field, which keeps focus.
    await press(page, 'Enter');
    await expectVisible(form.getByText(messages.empty));
    await expectFocus(page, /^input:Name/);
    const tokenName = uniqueName('ci');
    await page.keyboard.type(tokenName);
    await press(page, 'Enter');

    const created = dialog(page, 'New Access Token Generated');
    await expectVisible(created);
    await expectGone(form);
    expect(await focused(page)).not.toBe('body');
    const secret = await created.getByRole('textbox', { name: 'Token' }).inputValue();
    expect(secret).not.toBe('');
    await tabTo(page, 'button:Copy token');
    await press(page, 'Space');
    await expectVisible(created.getByRole('button', { name: 'Copied' }));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    // Focus stays on the button (which says "Copied" for 2 s, then "Copy token" again).
    expect(await focused(page)).toMatch(/^button:(Copied|Copy token)$/);

    await tabTo(page, 'button:Got it!');
    await press(page, 'Enter');
    await expectGone(created);
    await expectFocus(page, 'button:+ Add Token');
    await expectVisible(page.getByRole('cell', { name: tokenName, exact: true }));

    // Escape closes the form as well, and focus is back on its opener.
    await press(page, 'Enter');
    await expectVisible(form);
    await press(page, 'Escape');
    await expectGone(form);
    await expectFocus(page, 'button:+ Add Token');
  });

  it('domain add: opens the form, focuses the first invalid field, submits with Enter and shows the domain', async () => {
    const domain = `${uniqueName('walk')}.example.test`;
    const page = await harness.openPage('/domains');
    await expectVisible(page.getByRole('heading', { level: 1, name: 'Domains' }));
    await tabTo(page, 'button:Add Domain');
    await press(page, 'Enter');
    const form = dialog(page, 'Add Domain');
    await expectVisible(form);
    await expectFocus(page, /^input:Domain/);

    // An invalid domain, submitted with Save: the error shows and focus goes back to the field.
    await page.keyboard.type('not a domain');
    await tabTo(page, 'button:Save');
    await press(page, 'Enter');
    await expectVisible(form.getByText(messages.domain));
    await expectFocus(page, /^input:Domain/);
    expect(await form.count()).toBe(1);

    await press(page, 'Control+a');
    await page.keyboard.type(domain);
    await tabTo(page, /^input:Skip Domain Validation/);
    await press(page, 'Space');
    expect(await form.getByRole('checkbox', { name: 'Skip Domain Validation' }).isChecked()).toBe(true);
    await tabTo(page, /^input:Domain/, { back: true });
    await press(page, 'Enter');
    await expectGone(form);
    await expectVisible(page.getByRole('cell', { name: domain, exact: true }));
    await expectFocus(page, 'button:Add Domain');
  });

  it('log viewer: reached from a service menu, paused, resumed, filtered and scrolled by keyboard, then left', async () => {
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', { name: uniqueName('logs') });
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name: 'web',
      pathLocation: `/${uniqueName('web')}`,
      backendPort: 80,
    });
    const page = await harness.openPage(`/nodes/${node.id}`);
    // The browser tests' gateway runs without nginx, so no access log: the stream answers each connection with one
    // batch and ends, and the viewer's reconnect (1 s) fetches the next one. Enough lines to scroll.
    let batches = 0;
    await page.route(/\/api\/logs\/stream\?/, async (route) => {
      batches += 1;
      const batch = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? `[INFO] batch ${String(batches)} GET /alpha ${String(i)}`
          : `[ERROR] batch ${String(batches)} GET /beta ${String(i)}`,
      );
      await route.fulfill({
        status: 200,
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' },
        body: `data: ${JSON.stringify(batch)}\n\n`,
      });
    });
    await expectVisible(page.getByRole('heading', { level: 1, name: node.name }));

    await tabTo(page, 'button:Actions for web');
    await press(page, 'Enter');
    await expectFocus(page, 'button:Info');
    await press(page, 'ArrowDown');
    expect(await focused(page)).toBe('button:Logs Monitor');
    await press(page, 'Enter');
    await expectPath(page, `/nodes/${node.id}/http/${service.id}/logs`);
    await expectFocus(page, 'h1:Real Time Logs');
    const log = page.getByRole('log', { name: 'Real Time Logs' });
    const lineCount = () => log.getByRole('listitem').count();
    await expect.poll(lineCount, UNTIL_SHOWN).toBeGreaterThan(0);

    // Pause: the lines on screen hold still while the stream goes on, and the page says how many wait.
    await tabTo(page, 'button:Pause');
    await press(page, 'Enter');
    await expectFocus(page, 'button:Resume');
    const held = await lineCount();
    const batchesWhenPaused = batches;
    await expectVisible(page.getByText(/^Paused: \d+ new lines waiting$/));
    expect(await axeViolations(page, 'log viewer: paused')).toEqual([]);
    await expect.poll(() => batches, UNTIL_SHOWN).toBeGreaterThan(batchesWhenPaused + 1);
    expect(await lineCount()).toBe(held);
    await press(page, 'Space');
    await expectFocus(page, 'button:Pause');
    await expect.poll(lineCount, UNTIL_SHOWN).toBeGreaterThan(held);
    expect(await page.getByText(/^Paused/).count()).toBe(0);

    // Filter: only the lines holding the text.
    await tabTo(page, 'input:Show only lines containing');
    await page.keyboard.type('/beta');
    await expect
      .poll(
        async () => (await log.getByRole('listitem').allTextContents()).every((line) => line.includes('/beta')),
        UNTIL_SHOWN,
      )
      .toBe(true);
    expect(await lineCount()).toBeGreaterThan(0);
    await page.keyboard.type('-nothing');
    await expectVisible(log.getByText('No lines contain “/beta-nothing”.'));
    await press(page, 'Control+a');
    await press(page, 'Backspace');
    await expect.poll(() => log.getByText('[INFO]', { exact: false }).count(), UNTIL_SHOWN).toBeGreaterThan(0);

    // The log itself takes focus, so the keyboard scrolls it: Home goes up (and stops following), End back down.
    await tabTo(page, 'div:Real Time Logs');
    const scrollTop = () => log.evaluate((el) => el.scrollTop);
    await press(page, 'Home');
    await expect.poll(scrollTop, UNTIL_SHOWN).toBe(0);
    await press(page, 'End');
    await expect.poll(scrollTop, UNTIL_SHOWN).toBeGreaterThan(0);

    // Leave by the breadcrumb: back on the node's page, its heading focused.
    await tabTo(page, 'a:HTTP Services', { back: true });
    await press(page, 'Enter');
    await expectPath(page, `/nodes/${node.id}`);
    await expectFocus(page, `h1:${node.name}`);
  });

  it('two-factor enrolment: password, secret, a code from it, recovery codes, and on', async () => {
    const page = await harness.openPage('/');
    await expectVisible(page.getByRole('heading', { level: 1 }));
    await tabTo(page, 'a:Settings');
    await press(page, 'Enter');
    await expectPath(page, '/settings');
    await expectFocus(page, 'h1:Settings');

    // The two-factor card shows its form once its status has loaded; a user tabs to what is on the screen.
    await expectVisible(page.getByText('Enter your password to start.', { exact: false }));
    await tabTo(page, /^input:Password/);
    await page.keyboard.type(ADMIN.password);
    await press(page, 'Enter');
    const secretField = page.getByRole('textbox', { name: 'Secret', exact: true });
    await expectVisible(secretField);
    // The step that replaced the password form takes focus: its instructions, read first.
    await expectFocus(page, /^p:Scan the QR code/);
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // Settings is beyond the spec and not among screens.test.ts's shots: axe looks at each of its steps here.
    expect(await axeViolations(page, 'settings: secret step')).toEqual([]);

    await tabTo(page, /^input:Code from the app/);
    await press(page, 'Enter');
    // The password card above says the same of its own fields, left empty on the way (validated on blur).
    const twoFactor = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'Two-factor sign-in' }) });
    await expectVisible(twoFactor.getByText(messages.empty));
    await expectFocus(page, /^input:Code from the app/);
    const code = new TOTP({ algorithm: 'SHA1', digits: 6, period: 30, secret: Secret.fromBase32(secret) }).generate();
    await page.keyboard.type(code);
    await press(page, 'Enter');

    await expectVisible(page.getByRole('list', { name: 'Recovery codes' }));
    await expectFocus(page, /^p:Recovery codes are shown only once/);
    expect(await axeViolations(page, 'settings: recovery codes')).toEqual([]);
    await tabTo(page, 'button:I have stored them');
    await press(page, 'Enter');
    await expectVisible(page.getByText('On', { exact: true }));
    await expectVisible(page.getByText('Recovery codes left: 10.'));
    await expectFocus(page, /^p:Sign-in asks for a code from your authenticator app/);
    expect(await axeViolations(page, 'settings: on')).toEqual([]);
    // The next Tab goes on into the form that is there now.
    await press(page, 'Tab');
    await expectFocus(page, /^input:Password/);
  });
});
