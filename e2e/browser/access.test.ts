import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openShareLink, signInWithPassword, startDiscoveryIssuer, type DiscoveryIssuer } from './access-fixture.js';
import { axeViolations } from './axe.js';
import {
  acceptConfirmation,
  chooseMenuItem,
  dialog,
  expectGone,
  expectVisible,
  startConsole,
  toast,
  uniqueName,
  type ConsoleHarness,
} from './fixture.js';
import { startServer } from './server.js';

// Who may reach a published service, from the operator's side (docs/ACCESS.md, beyond the console spec): identity
// providers in Settings with a real discovery through the gateway, the Visitor Access section of the domain and HTTP
// service forms against the real API (a real 422 on its field), and a service's share links and visitor sessions.

interface Provider {
  id: number;
  name: string;
}
interface Policy {
  mode: string;
  providerId: number | null;
  allowEmailDomains: string[];
  passwordSet: boolean;
  shareLinks: boolean;
  bypassPaths: string[];
}

describe('visitor access', () => {
  let issuer: DiscoveryIssuer;
  let harness: ConsoleHarness;

  beforeAll(async () => {
    issuer = await startDiscoveryIssuer();
    // The gateway trusts the issuer's certificate as it would a provider's CA.
    harness = await startConsole(await startServer({ NODE_EXTRA_CA_CERTS: issuer.caFile }));
  });
  afterEach(() => {
    expect(harness.pageErrors).toEqual([]);
  });
  afterAll(async () => {
    await harness.close();
    await issuer.stop();
  });

  /** A node with an HTTP service on a new domain; ids for the API. */
  async function seedService(): Promise<{
    nodeId: number;
    serviceId: number;
    name: string;
    domain: string;
    domainId: number;
  }> {
    const domain = `${uniqueName('app')}.example.test`;
    const created = await harness.seed<{ id: number }>('POST', '/api/domains', {
      domain,
      ssl: 'self-signed',
      skipValidation: true,
    });
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('access-node') });
    const name = uniqueName('grafana');
    const service = await harness.seed<{ id: number }>('POST', `/api/services/${node.id}/http`, {
      name,
      domain,
      backendPort: 3000,
    });
    return { nodeId: node.id, serviceId: service.id, name, domain, domainId: created.id };
  }

  const providersCard = (page: Page) =>
    page.locator('section').filter({ has: page.getByRole('heading', { name: 'Identity providers', exact: true }) });

  it('adds an identity provider after testing its discovery, keeps the secret write-only, and deletes it', async () => {
    const page = await harness.openPage('/settings');
    const card = providersCard(page);
    await card.getByRole('button', { name: '+ Add provider' }).click();
    const form = dialog(page, 'Add Identity Provider');
    const name = uniqueName('Keycloak');
    await form.getByLabel('Name', { exact: true }).fill(name);

    // Nothing answers there: the gateway's reason is shown.
    await form.getByLabel('Issuer URL').fill('https://127.0.0.1:1');
    await form.getByRole('button', { name: 'Test connection' }).click();
    await expectVisible(form.getByRole('alert').filter({ hasText: /^Discovery at https:\/\/127\.0\.0\.1:1 failed: / }));

    // The issuer answers through the gateway: what it offers is shown.
    await form.getByLabel('Issuer URL').fill(issuer.issuer);
    await form.getByRole('button', { name: 'Test connection' }).click();
    const result = form.getByRole('status', { name: 'Test connection result' });
    await expectVisible(result.getByText(`${issuer.issuer}/token`, { exact: true }));
    await expectVisible(result.getByText('Supported', { exact: true }));
    expect(await axeViolations(page, 'identity provider form: tested')).toEqual([]);

    await form.getByLabel('Client ID').fill('postern');
    await form.getByLabel('Client secret').fill('the-client-secret');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Identity provider added'));
    await expectVisible(card.getByText(name, { exact: true }));

    // Edit: the secret is never sent back, and an empty field keeps it.
    const listed = await harness.seed<{ data: (Provider & { hasClientSecret: boolean })[] }>(
      'GET',
      '/api/access/providers?limit=100',
    );
    expect(JSON.stringify(listed)).not.toContain('the-client-secret');
    const provider = listed.data.find((row) => row.name === name);
    expect(provider?.hasClientSecret).toBe(true);
    await chooseMenuItem(page, `Actions for identity provider ${name}`, 'Edit');
    const edit = dialog(page, 'Edit Identity Provider');
    expect(await edit.getByLabel('Client secret').inputValue()).toBe('');
    expect(await edit.getByLabel('Client secret').getAttribute('placeholder')).toBe('Leave empty to keep');
    await edit.getByLabel('Groups claim').fill('roles');
    await edit.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Identity provider updated'));
    const after = await harness.seed<{ data: (Provider & { hasClientSecret: boolean; groupsClaim: string })[] }>(
      'GET',
      '/api/access/providers?limit=100',
    );
    expect(after.data.find((row) => row.name === name)).toMatchObject({ hasClientSecret: true, groupsClaim: 'roles' });

    await chooseMenuItem(page, `Actions for identity provider ${name}`, 'Delete');
    await acceptConfirmation(page, 'Delete Identity Provider', 'Yes, delete it!');
    await expectVisible(toast(page, 'Identity provider deleted'));
    await expectGone(card.getByText(name, { exact: true }));
  });

  it("protects a domain and a service from their forms; the server's 422 lands on its field", async () => {
    const { nodeId, serviceId, name, domain, domainId } = await seedService();
    const provider = await harness.seed<Provider>('POST', '/api/access/providers', {
      name: uniqueName('Authentik'),
      issuer: issuer.issuer,
      clientId: 'postern',
    });
    const gone = await harness.seed<Provider>('POST', '/api/access/providers', {
      name: uniqueName('Gone'),
      issuer: issuer.issuer,
      clientId: 'postern',
    });

    const page = await harness.openPage(`/domains?q=${domain}`);
    await chooseMenuItem(page, `Actions for ${domain}`, 'Edit Domain');
    let form = dialog(page, 'Edit Domain');
    await form.getByRole('radio', { name: 'Protected' }).check();
    await form.getByLabel('Single sign-on').selectOption(String(gone.id));
    await form.getByLabel('Allowed email domains').fill('example.com');
    // The provider goes away while the form is open: the gateway refuses, and says so on the field.
    await harness.seed('DELETE', `/api/access/providers/${gone.id}`);
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(form.getByText('This identity provider does not exist', { exact: true }));
    expect(await form.getByLabel('Single sign-on').evaluate((element) => element === document.activeElement)).toBe(
      true,
    );
    expect((await harness.seed<{ policy: Policy }>('GET', `/api/domains/${domainId}/access`)).policy.mode).toBe(
      'public',
    );

    await form.getByLabel('Single sign-on').selectOption(String(provider.id));
    await form.getByRole('button', { name: 'Set a password or PIN' }).click();
    await form.getByLabel('Password or PIN').fill('482916');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Domain updated successfully!'));
    const domainPolicy = (await harness.seed<{ policy: Policy }>('GET', `/api/domains/${domainId}/access`)).policy;
    expect(domainPolicy).toMatchObject({
      mode: 'protected',
      providerId: provider.id,
      allowEmailDomains: ['example.com'],
      passwordSet: true,
    });

    // The service inherits it, and says so; then gets its own policy with share links and a webhook path.
    await page.goto(`/nodes/${nodeId}`);
    await chooseMenuItem(page, `Actions for ${name}`, 'Edit Service');
    form = dialog(page, 'Edit HTTP Service');
    const applied = form.getByRole('group', { name: 'Applied now' });
    await expectVisible(applied.getByText(`Applied now: Inherited from ${domain}`));
    await expectVisible(applied.getByText('Password or PIN', { exact: true }));
    await form.getByRole('radio', { name: 'Protected' }).check();
    await form.getByLabel('Share links').check();
    await form.getByLabel('Paths without sign-in').fill('hook');
    await form.getByLabel('Paths without sign-in').blur();
    await expectVisible(form.getByText(/^hook: This field must start with '\/'/));
    await form.getByLabel('Paths without sign-in').fill('/hook');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectGone(form);
    const access = await harness.seed<{ mode: string; own: Policy; effective: Policy & { source: string } }>(
      'GET',
      `/api/services/${nodeId}/http/${serviceId}/access`,
    );
    expect(access.mode).toBe('protected');
    expect(access.own).toMatchObject({ shareLinks: true, bypassPaths: ['/hook'], providerId: null });
    expect(access.effective.source).toBe('service');
  });

  it('creates a protected service in one submit: it is never served public before its policy', async () => {
    const { nodeId, domain } = await seedService();
    const page = await harness.openPage(`/nodes/${nodeId}`);
    await page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'HTTP Services', exact: true }) })
      .getByRole('button', { name: 'Add Service' })
      .first()
      .click();
    const form = dialog(page, 'Expose HTTP Service');
    const name = uniqueName('wiki');
    await form.getByLabel('Service Name').fill(name);
    await form.getByRole('combobox', { name: 'Public Domain' }).fill(domain);
    await form.getByLabel('Public HTTP Path').fill('/wiki');
    await form.getByRole('radio', { name: 'Protected' }).check();
    await form.getByRole('button', { name: 'Set a password or PIN' }).click();
    await form.getByLabel('Password or PIN').fill('secret-pin-1');
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(dialog(page, 'Your Service is Now Publicly Available'));

    // Created disabled, then given its policy, then enabled (the audit log, newest first).
    const audit = await harness.seed<{ data: { action: string; after: { enabled?: boolean } | null }[] }>(
      'GET',
      `/api/audit?limit=3&node=${nodeId}`,
    );
    expect(audit.data.map((entry) => entry.action)).toEqual([
      'service.enable',
      'access.policy-update',
      'service.create',
    ]);
    expect(audit.data[2]?.after?.enabled).toBe(false);
    const services = await harness.seed<{ data: { id: number; name: string; enabled: boolean }[] }>(
      'GET',
      `/api/services/${nodeId}/http`,
    );
    const created = services.data.find((service) => service.name === name);
    expect(created?.enabled).toBe(true);
    const access = await harness.seed<{ own: Policy }>('GET', `/api/services/${nodeId}/http/${created?.id}/access`);
    expect(access.own).toMatchObject({ mode: 'protected', passwordSet: true });
  });

  it("ends a visitor's session; a share link shown once, copied, revoked, and its visitor signed out", async () => {
    const { nodeId, serviceId, name, domain, domainId } = await seedService();
    await harness.seed('PATCH', `/api/domains/${domainId}/access`, {
      mode: 'protected',
      password: 'visitor-pin-1',
      shareLinks: true,
    });
    // A visitor signs in with the password through the real sign-in exchange.
    await signInWithPassword(harness.server.baseUrl, {
      host: domain,
      serviceId,
      password: 'visitor-pin-1',
      from: '198.51.100.7',
    });

    const page = await harness.openPage(`/nodes/${nodeId}`);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: harness.server.baseUrl });
    await chooseMenuItem(page, `Actions for ${name}`, 'Visitor Access');
    const access = dialog(page, `Visitor Access: ${name}`);
    await expectVisible(access.getByText(`Inherited from ${domain}`, { exact: true }));

    const visitors = access.getByRole('region', { name: 'Signed-in visitors' });
    const byPassword = visitors.getByRole('row').filter({ hasText: '198.51.100.7' });
    await expectVisible(byPassword.getByText('Visitor with the password', { exact: true }));
    await byPassword.getByRole('button', { name: 'End the session of Visitor with the password' }).click();
    await acceptConfirmation(page, 'End Visitor Session', 'Yes, end it!');
    await expectVisible(byPassword.getByText('Ended', { exact: true }));
    const sessions = await harness.seed<{ data: { address: string; revoked: boolean }[] }>(
      'GET',
      `/api/services/${nodeId}/http/${serviceId}/visitor-sessions`,
    );
    expect(sessions.data.map((session) => [session.address, session.revoked])).toEqual([['198.51.100.7', true]]);

    const links = access.getByRole('region', { name: 'Share links' });
    await links.getByRole('button', { name: '+ Create share link' }).click();
    const form = dialog(page, 'Create Share Link');
    await form.getByLabel('Name', { exact: true }).fill('for-bob');
    await form.getByLabel('Only below path (Optional)').fill('/dashboards');
    await form.getByLabel('Expires').selectOption('86400');
    await form.getByRole('button', { name: 'Save' }).click();
    const created = dialog(page, 'Share Link Created');
    const url = await created.getByRole('textbox', { name: 'Share link' }).inputValue();
    expect(url).toMatch(
      new RegExp(`^https://${domain.replace(/\./g, '\\.')}/_postern/access/share\\?token=[\\w-]{43}$`),
    );
    await created.getByRole('button', { name: 'Copy share link' }).click();
    await expectVisible(created.getByRole('button', { name: 'Copied' }));
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(url);
    await created.getByRole('button', { name: 'Got it!' }).click();
    await expectGone(created);

    // Listed without its URL, which is never shown again.
    const row = links.getByRole('row').filter({ hasText: 'for-bob' });
    await expectVisible(row.getByText('Active', { exact: true }));
    expect(await access.textContent()).not.toContain(url.split('token=')[1]);

    // Someone opens it (the real exchange); revoking the link signs them out too.
    await openShareLink(harness.server.baseUrl, url, '203.0.113.9');
    await page.getByRole('button', { name: 'Close' }).last().click();
    await chooseMenuItem(page, `Actions for ${name}`, 'Visitor Access');
    const holder = visitors.getByRole('row').filter({ hasText: '203.0.113.9' });
    await expectVisible(holder.getByText('Share link “for-bob”', { exact: true }));
    await row.getByRole('button', { name: 'Revoke share link for-bob' }).click();
    await acceptConfirmation(page, 'Revoke Share Link', 'Yes, revoke it!');
    await expectVisible(row.getByText('Revoked', { exact: true }));
    await expectVisible(holder.getByText('Ended', { exact: true }));
    expect(await axeViolations(page, 'visitor access dialog')).toEqual([]);
  });
});
