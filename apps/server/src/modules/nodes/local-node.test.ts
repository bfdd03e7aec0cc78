import { afterEach, beforeEach, expect, test } from 'vitest';
import type { HttpService, ListResponse } from '@postern/contract';
import { httpServices } from '../../db/schema.js';
import { buildTestApp, type TestApp } from '../../test/build-test-app.js';
import { ensureLocalNode, LEGACY_CONSOLE_SERVICE_NAME } from './local-node.js';

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.cleanup();
});

const localServices = async () => {
  const token = await t.login();
  const response = await t.app.inject({
    method: 'GET',
    url: '/api/services/1/http',
    headers: { authorization: `Bearer ${token}` },
  });
  return response.json<ListResponse<HttpService>>().data;
};

test('the local node publishes nothing of its own: nginx serves the console on the public host by itself', async () => {
  expect(await localServices()).toEqual([]);
  await t.deps.dataPlane.apply();
  expect(t.fakeDataPlane.lastState?.http).toEqual([]);
});

test('the console service earlier versions created is removed at boot, and nothing else of the local node', async () => {
  const row = { nodeId: 1, domain: '', pathLocation: '/', backendHost: '127.0.0.1', backendPort: t.deps.config.port };
  await t.db.write(
    async (tx) =>
      await tx
        .insert(httpServices)
        .values([
          { ...row, name: LEGACY_CONSOLE_SERVICE_NAME },
          { ...row, name: 'grafana', pathLocation: '/grafana', backendPort: 3001 },
        ])
        .run(),
  );
  await ensureLocalNode(t.deps);
  expect((await localServices()).map((s) => s.name)).toEqual(['grafana']);
});
