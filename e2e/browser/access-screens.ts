import type { Page } from 'playwright-core';
import { openShareLink, signInWithPassword } from './access-fixture.js';
import { chooseMenuItem, dialog, expectGone, expectVisible, type ConsoleHarness } from './fixture.js';

// The access screens of the screenshot matrix (screens.test.ts): Settings' identity providers, the Visitor Access
// section of the domain and HTTP service forms, a service's Visitor Access and a new share link.

export interface AccessScreensSeed {
  nodeId: number;
  serviceName: string;
  domain: string;
}

/** A provider, the domain protected (single sign-on, a password, share links), a share link and two visitors. */
export async function seedAccessScreens(
  harness: ConsoleHarness,
  target: { nodeId: number; serviceId: number; domain: string },
): Promise<void> {
  const provider = await harness.seed<{ id: number }>('POST', '/api/access/providers', {
    name: 'Company SSO',
    issuer: 'https://sso.example.test/realms/company',
    clientId: 'postern',
    clientSecret: 'screens-client-secret',
  });
  const domains = await harness.seed<{ data: { id: number; domain: string }[] }>(
    'GET',
    `/api/domains?search=${target.domain}`,
  );
  const domainId = domains.data.find((row) => row.domain === target.domain)?.id ?? 0;

  await harness.seed('PATCH', `/api/domains/${domainId}/access`, {
    mode: 'protected',
    providerId: provider.id,
    allowEmailDomains: ['example.com'],
    allowGroups: ['ops'],
    password: '246810',
    shareLinks: true,
    bypassPaths: ['/webhook'],
  });
  const link = await harness.seed<{ url: string }>(
    'POST',
    `/api/services/${target.nodeId}/http/${target.serviceId}/share-links`,
    { name: 'for-the-auditor', ttl: 7 * 86_400 },
  );
  // Two visitors, through the real sign-in exchange.
  const { baseUrl } = harness.server;
  await signInWithPassword(baseUrl, {
    host: target.domain,
    serviceId: target.serviceId,
    password: '246810',
    from: '198.51.100.7',
  });
  await openShareLink(baseUrl, link.url, '203.0.113.9');
}

type Shot = (page: Page, screen: string) => Promise<void>;

/**
 * Starts on Settings (the matrix's previous screen). `say` gives the test's English texts in the screen's language
 * (screens.test.ts).
 */
export async function snapAccessScreens(
  page: Page,
  shot: Shot,
  seeded: AccessScreensSeed,
  say: (english: string) => string | RegExp = (text) => text,
): Promise<void> {
  const providers = page
    .locator('section')
    .filter({ has: page.getByRole('heading', { name: say('Identity providers'), exact: true }) });
  await expectVisible(providers.getByText('Company SSO', { exact: true }));
  await providers.getByRole('button', { name: say('+ Add provider') }).click();
  const providerForm = dialog(page, say('Add Identity Provider'));
  await providerForm.getByLabel(say('Name'), { exact: true }).fill('Google');
  await providerForm.getByLabel(say('Issuer URL')).fill('https://accounts.google.com');
  await shot(page, 'dialog-identity-provider-form');
  await providerForm.getByRole('button', { name: say('Cancel') }).click();
  await expectGone(providerForm);

  await page.goto(`/domains?q=${seeded.domain}`);
  await chooseMenuItem(page, say(`Actions for ${seeded.domain}`), say('Edit Domain'));
  const domainForm = dialog(page, say('Edit Domain'));
  await expectVisible(domainForm.getByText(say('A password is set.')));
  await shot(page, 'dialog-domain-form-access');
  await domainForm.getByRole('button', { name: say('Cancel') }).click();
  await expectGone(domainForm);

  await page.goto(`/nodes/${seeded.nodeId}`);
  await chooseMenuItem(page, say(`Actions for ${seeded.serviceName}`), say('Edit Service'));
  const serviceForm = dialog(page, say('Edit HTTP Service'));
  await expectVisible(serviceForm.getByRole('group', { name: say('Applied now') }));
  await shot(page, 'dialog-http-service-form-access');
  await serviceForm.getByRole('button', { name: say('Cancel') }).click();
  await expectGone(serviceForm);

  await chooseMenuItem(page, say(`Actions for ${seeded.serviceName}`), say('Visitor Access'));
  const access = dialog(page, say(`Visitor Access: ${seeded.serviceName}`));
  await expectVisible(access.getByText(say('Share link “for-the-auditor”'), { exact: true }));
  await expectVisible(access.getByText('for-the-auditor', { exact: true }));
  await shot(page, 'dialog-visitor-access');
  await access.getByRole('button', { name: say('+ Create share link') }).click();
  const linkForm = dialog(page, say('Create Share Link'));
  await linkForm.getByLabel(say('Name'), { exact: true }).fill('for-a-friend');
  await linkForm.getByRole('button', { name: say('Save') }).click();
  const created = dialog(page, say('Share Link Created'));
  await expectVisible(created.getByRole('textbox', { name: say('Share link') }));
  await shot(page, 'dialog-share-link-created');
  await created.getByRole('button', { name: say('Got it!') }).click();
  await expectGone(created);
  await access
    .getByRole('button', { name: say('Close') })
    .last()
    .click();
  await expectGone(access);
}
