import { messages, ruleMessages } from '@postern/contract';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { dialog, expectGone, expectVisible, useConsoleHarness, uniqueName, UNTIL_SHOWN } from './fixture.js';

// Validation as the operator meets it: messages on input/blur and on submit, and a server 422 shown on the
// field it names (the spec's "Validation rules" and "Error catalogue").

/** The error shown under the field labelled `label` (the form fields link it with aria-describedby). */
async function fieldError(field: Locator): Promise<string | null> {
  const describedBy = await field.getAttribute('aria-describedby');
  if (!describedBy) return null;
  return field.page().locator(`[id="${describedBy}"]`).textContent();
}

const httpServicesCard = (page: Page) =>
  page.locator('section').filter({ has: page.getByRole('heading', { name: 'HTTP Services', exact: true }) });

const save = (form: Locator) => form.getByRole('button', { name: 'Save' }).click();

async function expectFieldError(field: Locator, message: string | null): Promise<void> {
  await expect.poll(() => fieldError(field), UNTIL_SHOWN).toBe(message);
}

describe('form validation', () => {
  const harness = useConsoleHarness();

  async function openNodeForm(page: Page): Promise<Locator> {
    await page.getByRole('button', { name: 'Add Client' }).click();
    const form = dialog(page, 'New Node');
    await expectVisible(form);
    return form;
  }

  it('checks the node form on submit and on input, including the gateway subnet rule', async () => {
    const page = await harness.openPage('/nodes');
    const form = await openNodeForm(page);
    const name = form.getByLabel('Name', { exact: true });
    await save(form);
    await expectFieldError(name, messages.empty);
    await name.fill(uniqueName('edge'));
    await expectFieldError(name, null);

    await form.getByLabel('This node is a gateway').check();
    const subnet = form.getByLabel('Gateway Network');
    await save(form);
    await expectFieldError(subnet, messages.required);
    await subnet.fill('192.168.5.0');
    await subnet.blur();
    await expectFieldError(subnet, ruleMessages.cidr);
    await subnet.fill('192.168.5.0/24');
    await expectFieldError(subnet, null);

    await form.getByLabel('This node is a gateway').uncheck();
    await expectGone(subnet);
    await save(form);
    await expectVisible(dialog(page, 'Your Node is Ready'));
  });

  it('rejects a domain that is not a domain name', async () => {
    const page = await harness.openPage('/domains');
    await page.getByRole('button', { name: 'Add Domain' }).first().click();
    const form = dialog(page, 'Add Domain');
    const domain = form.getByLabel('Domain', { exact: true });
    await domain.fill('not a domain');
    await domain.blur();
    await expectFieldError(domain, messages.domain);
    await save(form);
    await expectVisible(form);
  });

  it("shows the server's 422 message on the field it names", async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('dup-node') });
    const path = `/${uniqueName('taken')}`;
    await harness.seed('POST', `/api/services/${node.id}/http`, { name: 'first', pathLocation: path, backendPort: 80 });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await httpServicesCard(page).getByRole('button', { name: 'Add Service' }).first().click();
    const form = dialog(page, 'Expose HTTP Service');
    await form.getByLabel('Service Name').fill('second');
    const pathField = form.getByLabel('Public HTTP Path');
    await pathField.fill('no-slash');
    await pathField.blur();
    await expectFieldError(pathField, ruleMessages.path);

    await pathField.fill(path);
    await save(form);
    await expectFieldError(pathField, `The path ${path} on the default host is already used by the service "first"`);
    await expectVisible(form);
  });

  it('rejects a node address with a CIDR', async () => {
    const page = await harness.openPage('/nodes');
    const form = await openNodeForm(page);
    const address = form.getByLabel('Address (Optional)');
    await address.fill('10.44.0.50/24');
    await address.blur();
    await expectFieldError(address, ruleMessages.ipv4);
    await address.fill('');
    await expectFieldError(address, null);
  });

  it('lets only gateways forward to another backend host, and requires it there', async () => {
    const plain = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('plain') });
    const gateway = await harness.seed<{ id: number }>('POST', '/api/nodes', {
      name: uniqueName('gw'),
      isGateway: true,
      gatewayNetwork: '192.168.90.0/24',
    });

    const plainPage = await harness.openPage(`/nodes/${plain.id}`);
    await httpServicesCard(plainPage).getByRole('button', { name: 'Add Service' }).first().click();
    expect(await dialog(plainPage, 'Expose HTTP Service').getByLabel('Backend Host').isDisabled()).toBe(true);

    const page = await harness.openPage(`/nodes/${gateway.id}`);
    await httpServicesCard(page).getByRole('button', { name: 'Add Service' }).first().click();
    const form = dialog(page, 'Expose HTTP Service');
    const host = form.getByLabel('Backend Host');
    expect(await host.isEnabled()).toBe(true);
    await form.getByLabel('Service Name').fill('printer');
    await form.getByLabel('Public HTTP Path').fill(`/${uniqueName('printer')}`);
    await host.fill('');
    await save(form);
    await expectFieldError(host, messages.required);
    await host.fill('192.168.90.20');
    await save(form);
    await expectVisible(dialog(page, 'Your Service is Now Publicly Available'));
  });

  it('suggests existing domains in the service form and checks the IP lists', async () => {
    const domain = `${uniqueName('suggest')}.example.test`;
    await harness.seed('POST', '/api/domains', { domain, ssl: 'self-signed', skipValidation: true });
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('suggest-node') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await httpServicesCard(page).getByRole('button', { name: 'Add Service' }).first().click();
    const form = dialog(page, 'Expose HTTP Service');
    const domainField = form.getByRole('combobox', { name: 'Public Domain' });
    await domainField.fill(domain.slice(0, 10));
    await form.getByRole('option', { name: domain }).click();
    expect(await domainField.inputValue()).toBe(domain);

    // The message is tied to the field (aria-describedby), so assistive technology reads it with the field.
    const allowed = form.getByLabel('Allowed IPs');
    await allowed.fill('10.0.0.0/8\nnot-an-ip');
    await allowed.blur();
    await expectFieldError(allowed, ruleMessages.ipOrCidr);
    await allowed.fill('10.0.0.0/8');
    await expectFieldError(allowed, null);
  });

  it('offers TLS termination for TCP only', async () => {
    const node = await harness.seed<{ id: number }>('POST', '/api/nodes', { name: uniqueName('udp-node') });
    const page = await harness.openPage(`/nodes/${node.id}`);
    await page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: 'TCP Services', exact: true }) })
      .getByRole('button', { name: 'Add Service' })
      .first()
      .click();
    const form = dialog(page, 'Expose TCP Service');
    const tls = form.getByLabel('Enable SSL (TLS termination)');
    await tls.check();
    await form.getByLabel('Protocol').selectOption('udp');
    expect(await tls.isDisabled()).toBe(true);
    expect(await tls.isChecked()).toBe(false);
  });
});
