import { describe, expect, it } from 'vitest';
import {
  acceptConfirmation,
  chooseMenuItem,
  dialog,
  expectGone,
  expectPath,
  expectVisible,
  openMenu,
  useConsoleHarness,
  toast,
  uniqueName,
} from './fixture.js';
import { makeTestCa, makeTestLeaf, uploadBody } from '../../apps/server/src/test/certificates.js';

// Domains: the form's skip-validation rule, the row menu, expanded services, edit and delete (the spec's "Screens and
// routes", "Validation rules" and "Error catalogue"), and each domain's owner: Admin or the node whose token may
// publish on it.

describe('domains', () => {
  const harness = useConsoleHarness();

  it('creates a domain; skipping validation forces self-signed and disables the selector', async () => {
    const domain = `${uniqueName('shop')}.example.test`;
    const page = await harness.openPage('/domains');
    await page.getByRole('button', { name: 'Add Domain' }).first().click();
    const form = dialog(page, 'Add Domain');
    await expectVisible(form);
    await form.getByLabel('Domain', { exact: true }).fill(domain);

    const ssl = form.getByLabel('SSL Certificate Type');
    await ssl.selectOption('certbot');
    expect(await ssl.inputValue()).toBe('certbot');
    expect(await ssl.isEnabled()).toBe(true);

    await form.getByLabel('Skip Domain Validation').check();
    expect(await ssl.inputValue()).toBe('self-signed');
    expect(await ssl.isDisabled()).toBe(true);

    await form.getByRole('button', { name: 'Save' }).click();
    const created = toast(page, 'Domain created successfully!');
    await expectVisible(created);
    const box = await created.boundingBox();
    const viewport = page.viewportSize();
    expect(box && viewport && box.y < 100 && viewport.width - (box.x + box.width) < 100, 'toast at the top right').toBe(
      true,
    );
    await expectGone(form);
    // Toasts leave by themselves (3000 ms default).
    await created.waitFor({ state: 'detached', timeout: 6000 });
    const row = page.getByRole('row').filter({ hasText: domain });
    await expectVisible(row);

    const saved = await harness.seed<{ data: { domain: string; ssl: string }[] }>('GET', '/api/domains');
    expect(saved.data.find((d) => d.domain === domain)?.ssl).toBe('self-signed');
  });

  it("expands a domain to its services, whose menu leads to their node, and opens the domain's logs", async () => {
    const domain = `${uniqueName('blog')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const node = await harness.seed<{ id: number; name: string }>('POST', '/api/nodes', {
      name: uniqueName('blog-node'),
    });
    const service = uniqueName('blog');
    await harness.seed('POST', `/api/services/${node.id}/http`, { name: service, domain, backendPort: 2368 });
    const page = await harness.openPage('/domains');

    await page.getByRole('button', { name: `Show services of ${domain}` }).click();
    await expectVisible(page.getByText(service, { exact: true }));
    await expectVisible(page.getByText('No TCP services yet'));
    const menu = await openMenu(page, `Actions for ${service}`);
    expect(await menu.getByRole('menuitem', { name: 'Edit Service' }).count()).toBe(0);
    await menu.getByRole('menuitem', { name: 'Go to node' }).click();
    await expectPath(page, `/nodes/${node.id}`);

    await page.goto('/domains');
    await chooseMenuItem(page, `Actions for ${domain}`, 'Logs Monitor');
    await expectPath(page, `/domains/${domain}/logs`);
    await expectVisible(page.getByRole('log'));
  });

  it('edits and deletes a domain, with toasts', async () => {
    const domain = `${uniqueName('old')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const page = await harness.openPage('/domains');

    await chooseMenuItem(page, `Actions for ${domain}`, 'Edit Domain');
    const form = dialog(page, 'Edit Domain');
    expect(await form.getByLabel('Domain', { exact: true }).inputValue()).toBe(domain);
    const renamed = `${uniqueName('new')}.example.test`;
    await form.getByLabel('Domain', { exact: true }).fill(renamed);
    await form.getByLabel('Skip Domain Validation').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Domain updated successfully!'));
    await expectVisible(page.getByRole('row').filter({ hasText: renamed }));

    await chooseMenuItem(page, `Actions for ${renamed}`, 'Delete Domain');
    await acceptConfirmation(page, 'Delete Domain', 'Yes, delete it!');
    await expectVisible(toast(page, 'Domain deleted successfully!'));
    await expectGone(page.getByRole('row').filter({ hasText: renamed }));
  });

  it('uploads your own certificate: one for another name is refused on its field, the right one is saved', async () => {
    const domain = `${uniqueName('own')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const ca = await makeTestCa();
    const wrong = uploadBody(await makeTestLeaf(ca, ['other.example.test']), ca);
    const right = uploadBody(await makeTestLeaf(ca, [domain]), ca);
    const page = await harness.openPage('/domains');

    await chooseMenuItem(page, `Actions for ${domain}`, 'Upload Certificate');
    const form = dialog(page, 'Upload Certificate');
    await form.getByLabel('Certificate Chain (PEM)').fill(wrong.certificate);
    await form.getByLabel('Private Key (PEM)').fill(wrong.privateKey);
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(form.getByText(`The certificate is for other.example.test, not for ${domain}`));

    await form.getByLabel('Certificate Chain (PEM)').fill(right.certificate);
    await form.getByLabel('Private Key (PEM)').fill(right.privateKey);
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, `Certificate uploaded for ${domain}`));
    await expectGone(form);
    await expectVisible(page.getByRole('row').filter({ hasText: domain }).getByText('Your own certificate'));
    const saved = await harness.seed<{ data: { domain: string; ssl: string }[] }>('GET', '/api/domains');
    expect(saved.data.find((d) => d.domain === domain)?.ssl).toBe('uploaded');
  });

  it("shows the server's message in an error toast when a domain in use cannot be deleted", async () => {
    const domain = `${uniqueName('busy')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('busy-node') });
    await harness.seed('POST', `/api/services/${node.id}/http`, { name: uniqueName('busy'), domain, backendPort: 80 });
    const page = await harness.openPage('/domains');

    await chooseMenuItem(page, `Actions for ${domain}`, 'Delete Domain');
    await acceptConfirmation(page, 'Delete Domain', 'Yes, delete it!');
    await expectVisible(page.getByRole('alert').filter({ hasText: `The domain ${domain} is used by` }));
    expect(await toast(page, 'Domain deleted successfully!').count()).toBe(0);
    await expectVisible(page.getByRole('row').filter({ hasText: domain }));
  });

  it('assigns a domain to a node in the form, shows the owner linked to the node, and hands it back to Admin', async () => {
    const domain = `${uniqueName('owned')}.example.test`;
    const nodeName = uniqueName('owner-node');
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: nodeName });
    const page = await harness.openPage('/domains');
    await page.getByRole('button', { name: 'Add Domain' }).first().click();
    const form = dialog(page, 'Add Domain');
    await form.getByLabel('Domain', { exact: true }).fill(domain);
    await form.getByLabel('Skip Domain Validation').check();
    const owner = form.getByLabel('Owner');
    expect(await owner.inputValue()).toBe('');
    // The local node cannot own domains: it is not offered.
    expect(await owner.locator('option', { hasText: 'Gateway (local)' }).count()).toBe(0);
    await owner.selectOption({ label: nodeName });
    await form.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Domain created successfully!'));

    const row = page.getByRole('row').filter({ hasText: domain });
    await expectVisible(row.getByRole('link', { name: nodeName }));
    const saved = await harness.seed<{ data: { id: number; domain: string; ownerNodeId: number | null }[] }>(
      'GET',
      `/api/domains?search=${domain}`,
    );
    expect(saved.data[0]?.ownerNodeId).toBe(node.id);

    await chooseMenuItem(page, `Actions for ${domain}`, 'Edit Domain');
    const edit = dialog(page, 'Edit Domain');
    expect(await edit.getByLabel('Owner').inputValue()).toBe(String(node.id));
    await edit.getByLabel('Owner').selectOption({ label: 'Admin' });
    await edit.getByRole('button', { name: 'Save' }).click();
    await expectVisible(toast(page, 'Domain updated successfully!'));
    await expectVisible(row.getByText('Admin', { exact: true }));

    await harness.seed('PATCH', `/api/domains/${saved.data[0]?.id ?? 0}`, { ownerNodeId: node.id });
    await page.reload();
    await row.getByRole('link', { name: nodeName }).click();
    await expectPath(page, `/nodes/${node.id}`);
  });
});
