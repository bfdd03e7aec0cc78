import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NotificationPayload, Theme } from '@postern/contract';
import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { canRun } from '../../apps/server/src/test/requirements.js';
import { axeViolations, type Violation } from './axe.js';
import { expectGone, expectVisible, startConsole, toast, UNTIL_SHOWN, type ConsoleHarness } from './fixture.js';
import { startRealGateway, type RealGateway } from './real-gateway.js';

// Settings → Notifications as an operator uses it (docs/api.md "Notifications"), against a real gateway in the
// system tests' namespaces: a webhook channel added, "send test" from the unsaved form and from the saved row reaching
// a real receiver (in this process, on the test's end of the gateway's management link: the gateway refuses its own
// addresses and loopback, so the console's own loopback server could not be sent to), the channel edited with its
// secrets write-only, then deleted. On a phone in dark and a desktop in light, axe clean with the form open and shut.

const SECRET = 'browser-test-signing-secret';

const variants: { viewport: 'desktop' | 'phone'; theme: Theme }[] = [
  { viewport: 'phone', theme: 'dark' },
  { viewport: 'desktop', theme: 'light' },
];

describe.skipIf(!canRun('netns', 'server-build'))('notification channels in the console', () => {
  let gateway: RealGateway;
  let harness: ConsoleHarness;
  let receiver: Server | undefined;
  let receiverUrl = '';
  const received: { path: string; payload: NotificationPayload }[] = [];

  beforeAll(async () => {
    gateway = await startRealGateway();
    harness = await startConsole(gateway);
    // The test's end of the management link (the gateway's end is .2 of its /30, harness/topology.ts).
    const ip = gateway.system.topology.gatewayMgmtIp.replace(
      /\.(\d+)$/,
      (_, last: string) => `.${String(Number(last) - 1)}`,
    );
    receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', payload: JSON.parse(body) as NotificationPayload });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver?.listen(0, ip, resolve));
    receiverUrl = `http://${ip}:${String((receiver.address() as AddressInfo).port)}`;
  });

  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });

  afterAll(async () => {
    await harness.close();
    await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
    expect(gateway.leftovers()).toEqual([]);
  });

  const card = (page: Page): Locator =>
    page.locator('section', { has: page.getByRole('heading', { name: 'Notifications', exact: true }) });
  const testsAt = (path: string) => received.filter((r) => r.path === path && r.payload.type === 'test');

  for (const { viewport, theme } of variants)
    it(`adds, tests, edits and deletes a webhook channel (${viewport}, ${theme}), axe clean`, async () => {
      const name = `ops-${viewport}`;
      const path = `/hooks/${viewport}`;
      const violations: Violation[] = [];
      const page = await harness.openPage('/settings', { viewport, theme });
      const notifications = card(page);
      await notifications.getByRole('button', { name: 'Add Channel', exact: true }).click();
      const form = notifications.getByRole('form', { name: 'New channel' });
      await expectVisible(form);
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByLabel('URL', { exact: true }).fill(`${receiverUrl}${path}`);
      await form.getByLabel('Signing secret', { exact: true }).fill(SECRET);
      // Only backends, in this channel.
      for (const label of ['Node offline / online again', 'Drift found (and repaired)'])
        await form.getByLabel(label, { exact: true }).uncheck();
      violations.push(...(await axeViolations(page, `notifications-form-${viewport}-${theme}`)));

      // "Send test" from the unsaved form: the receiver gets it, the toast says what it answered.
      await form.getByRole('button', { name: 'Send Test', exact: true }).click();
      await expect.poll(() => testsAt(path).length, UNTIL_SHOWN).toBe(1);
      await expectVisible(page.getByRole('status').filter({ hasText: 'answered 204' }));
      await form.getByRole('button', { name: 'Save Channel', exact: true }).click();
      await expectVisible(toast(page, 'Channel added'));
      await expectGone(form);
      const row = notifications.getByRole('listitem').filter({ hasText: name });
      await expectVisible(row);
      await expectVisible(row.getByText(`${receiverUrl}/…`, { exact: true }));
      violations.push(...(await axeViolations(page, `notifications-${viewport}-${theme}`)));

      // Edit: the URL and the secret are not shown back, only offered for replacing; the name changes.
      await notifications.getByRole('button', { name: `Edit ${name}`, exact: true }).click();
      const edit = notifications.getByRole('form', { name: `Edit ${name}` });
      await expectVisible(edit);
      await expectVisible(edit.getByText('Signing secret: stored, never shown'));
      expect(await edit.getByLabel('URL', { exact: true }).count()).toBe(0);
      expect(await page.content()).not.toContain(SECRET);
      expect(await edit.getByLabel('Node offline / online again', { exact: true }).isChecked()).toBe(false);
      violations.push(...(await axeViolations(page, `notifications-edit-${viewport}-${theme}`)));
      await edit.getByLabel('Name', { exact: true }).fill(`${name}-renamed`);
      await edit.getByRole('button', { name: 'Save Channel', exact: true }).click();
      await expectVisible(toast(page, 'Channel saved'));

      // The saved channel still signs and sends with its kept secret: "send test" from its row.
      await notifications.getByRole('button', { name: `Send test to ${name}-renamed`, exact: true }).click();
      await expect.poll(() => testsAt(path).length, UNTIL_SHOWN).toBe(2);
      expect(testsAt(path)[1]?.payload.title).toBe(`Test message from Postern (${name}-renamed)`);

      await notifications.getByRole('button', { name: `Delete ${name}-renamed`, exact: true }).click();
      await expectGone(notifications.getByRole('listitem').filter({ hasText: `${name}-renamed` }));
      expect(violations).toEqual([]);
    });
});
