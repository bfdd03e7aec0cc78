import { afterEach, beforeEach, expect, test } from 'vitest';
import type { HttpService, ListResponse } from '@postern/contract';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.cleanup();
});

test('from first boot the local node publishes the console over HTTPS on the default host', async () => {
  const token = await t.login();
  const response = await t.app.inject({ method: 'GET', url: '/api/services/1/http', headers: { authorization: `Bearer ${token}` } });
  const { data } = response.json<ListResponse<HttpService>>();
  expect(data).toEqual([
    expect.objectContaining({
      name: 'Postern console',
      domain: null,
      pathLocation: '/',
      backendProto: 'http',
      backendHost: '127.0.0.1',
      backendPort: t.deps.config.port,
      enabled: true,
      // Without a domain: the public host's no-domain port (POSTERN_NO_DOMAIN_HTTPS_PORT).
      publicAccess: `https://${t.deps.config.publicHost}:${t.deps.config.noDomainHttpsPort}/`,
    }),
  ]);
});
