import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { makeTestCa, makeTestLeaf, uploadBody } from '../../apps/server/src/test/certificates.js';
import { axeViolations, type Violation } from './axe.js';
import {
  chooseMenuItem,
  dialog,
  expectGone,
  expectPath,
  expectVisible,
  toast,
  uniqueName,
  UNTIL_SHOWN,
  useConsoleHarness,
} from './fixture.js';

// Certificates for real setups in the console (docs/api.md "Certificates"): the certificates view with "renew now"
// and an uploaded certificate's expiry warning, reached from the navigation, on a phone and in both themes; a DNS
// provider added whose secret is never shown again. The upload form's refusal and success are in domains.test.ts.

const DAY_MS = 24 * 3600 * 1000;

/** What makes the page scroll sideways at this width (nothing, on a phone, is the promise). */
const sidewaysScrolling = (page: Page) =>
  page.evaluate(() => {
    const found: string[] = [];
    if (document.documentElement.scrollWidth > document.documentElement.clientWidth + 1) found.push('the page');
    for (const scroller of Array.from(document.querySelectorAll<HTMLElement>('main .overflow-x-auto'))) {
      if (scroller.scrollWidth > scroller.clientWidth + 1) found.push(`a table (${scroller.scrollWidth})`);
    }
    return found;
  });

describe('certificates', () => {
  const harness = useConsoleHarness();

  it('lists every certificate with its method and expiry, warns about an uploaded one ending soon, renews now', async () => {
    const acme = `${uniqueName('acme')}.example.test`;
    const own = `${uniqueName('own')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain: acme, ssl: 'certbot' });
    const uploaded = await harness.seed<{ id: number }>('POST', '/api/domains', { domain: own, ssl: 'self-signed' });
    const ca = await makeTestCa('Certificates View CA');
    const leaf = await makeTestLeaf(ca, [own], { notAfter: new Date(Date.now() + 10 * DAY_MS) });
    await harness.seed('POST', `/api/domains/${uploaded.id}/certificate`, uploadBody(leaf, ca));

    // The browser tests' gateway runs without its data plane, which reports a made-up certificate for every domain:
    // the end and issuer of the one uploaded are put into the real answers, as the data plane reports them.
    const notAfter = leaf.cert.notAfter.toISOString();
    const patch = (entry: { domain: string; certificate: { notAfter: string; issuer: string } | null }) => {
      if (entry.domain === own && entry.certificate)
        Object.assign(entry.certificate, { notAfter, issuer: ca.cert.subject });
    };
    const page = await harness.openPage('/');
    await page.route(/\/api\/(certificates|domains)(\?.*)?$/, async (route) => {
      const answer = await route.fetch();
      const body = (await answer.json()) as Parameters<typeof patch>[0][] | { data: Parameters<typeof patch>[0][] };
      for (const entry of Array.isArray(body) ? body : body.data) patch(entry);
      await route.fulfill({ response: answer, json: body });
    });
    await page.getByRole('navigation').getByRole('link', { name: 'Certificates' }).click();
    await expectPath(page, '/certificates');
    await expectVisible(page.getByRole('heading', { level: 1, name: 'Certificates' }));

    const acmeRow = page.getByRole('row').filter({ hasText: acme });
    const ownRow = page.getByRole('row').filter({ hasText: own });
    await expectVisible(ownRow);
    expect(await ownRow.getByRole('cell').nth(1).textContent()).toBe('Uploaded');
    expect(await ownRow.getByRole('cell').nth(2).textContent()).toBe('CN=Certificates View CA');
    await expectVisible(ownRow.getByText(/^Expires in 10 days \(.+\): upload a new certificate$/));
    // No CA renews an uploaded certificate: nothing offers to.
    expect(await ownRow.getByRole('button', { name: /Renew/ }).count()).toBe(0);
    expect(await acmeRow.getByRole('cell').nth(1).textContent()).toMatch(/^HTTP-01/);

    await acmeRow.getByRole('button', { name: `Renew now the certificate of ${acme}` }).click();
    await expectVisible(toast(page, `Renewal of ${acme} started: the CA is asked now`));
    await expectVisible(acmeRow.getByText('Pending'));

    // The domains list warns about it too.
    await page.getByRole('navigation').getByRole('link', { name: 'Domain Names' }).click();
    await page.getByLabel('Search domains by name').fill(own);
    await expectVisible(
      page
        .getByRole('row')
        .filter({ hasText: own })
        .getByText(/^Expires in 10 days .+: upload a new certificate$/),
    );
  });

  it('adds a DNS provider whose secret is never shown again, neither in the form nor in any answer', async () => {
    const name = uniqueName('cloudflare');
    const secret = `cf-token-${uniqueName('secret')}`;
    const page = await harness.openPage('/settings');
    const answers: string[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/'))
        void response.text().then(
          (text) => answers.push(text),
          () => undefined,
        );
    });
    await page.getByRole('button', { name: '+ Add DNS provider' }).click();
    const form = dialog(page, 'Add DNS Provider');
    await expectVisible(form);
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Kind').selectOption('cloudflare');
    // Without its secret it is refused on that field, nothing sent.
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(form.getByText('This field is required'));
    await form.getByLabel('API token').fill(secret);
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'DNS provider added'));
    await expectGone(form);
    await expectVisible(page.getByRole('row').filter({ hasText: name }));

    await chooseMenuItem(page, `Actions for DNS provider ${name}`, 'Edit');
    const edit = dialog(page, 'Edit DNS Provider');
    await expectVisible(edit.getByText('API token: stored, never shown'));
    expect(await edit.locator('input[type="password"]').count()).toBe(0);
    await edit.getByRole('button', { name: 'Replace secret' }).click();
    expect(await edit.getByLabel('API token').inputValue()).toBe('');
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await expectGone(edit);

    const content = await page.content();
    expect(content).not.toContain(secret);
    await expect.poll(() => answers.length, UNTIL_SHOWN).toBeGreaterThan(0);
    expect(answers.filter((text) => text.includes(secret))).toEqual([]);
    const listed = await harness.seed<unknown[]>('GET', '/api/certificates/dns-providers');
    expect(JSON.stringify(listed)).not.toContain(secret);
    expect(listed).toContainEqual(expect.objectContaining({ name, kind: 'cloudflare', hasSecret: true }));
  });

  it('the certificates view and the settings cards: on a phone, in both themes, nothing serious for axe', async () => {
    await harness.seed('POST', '/api/certificates/dns-providers', {
      name: uniqueName('bind'),
      kind: 'rfc2136',
      server: 'ns1.example.test',
      keyName: 'postern',
      algorithm: 'hmac-sha256',
      secret: 'c2VjcmV0',
    });
    await harness.seed('POST', '/api/certificates/authorities', {
      name: uniqueName('zerossl'),
      directoryUrl: 'https://acme.zerossl.com/v2/DV90',
      eabKeyId: 'kid-1',
      eabHmacKey: 'aG1hYw',
    });
    const violations: Violation[] = [];
    // Each theme once and the phone once: two visits cover what four would, at half the time.
    for (const [viewport, theme] of [
      ['desktop', 'light'],
      ['phone', 'dark'],
    ] as const) {
      const page = await harness.openPage('/certificates', { viewport, theme });
      await expectVisible(page.getByRole('row').nth(1));
      expect(await sidewaysScrolling(page), `${viewport} ${theme}`).toEqual([]);
      violations.push(...(await axeViolations(page, `certificates-${viewport}-${theme}`)));
      await page.goto('/settings');
      await expectVisible(page.getByRole('heading', { name: 'Certificate authorities' }));
      await expectVisible(page.getByRole('heading', { name: 'DNS providers' }));
      violations.push(...(await axeViolations(page, `settings-${viewport}-${theme}`)));
      await page.getByRole('button', { name: '+ Add CA' }).click();
      await expectVisible(dialog(page, 'Add Certificate Authority'));
      violations.push(...(await axeViolations(page, `ca-form-${viewport}-${theme}`)));
      await page.close();
    }
    expect(violations).toEqual([]);
  });
});
