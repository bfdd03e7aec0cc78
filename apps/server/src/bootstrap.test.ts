import { count } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrap } from './bootstrap.js';
import { ensureAdmin } from './modules/auth/bootstrap-admin.js';
import { nodes, users } from './db/schema.js';
import { buildTestApp, type TestApp } from './test/build-test-app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('first boot', () => {
  it('generates an admin password when none is configured, announces it once, and it signs in', async () => {
    t = await buildTestApp();
    await t.db.write(async (tx) => await tx.delete(users).run());
    const deps = { ...t.deps, config: { ...t.config, adminPassword: undefined } };
    const announced: [string, string][] = [];
    await bootstrap(deps, (username, password) => announced.push([username, password]));
    await bootstrap(deps, (username, password) => announced.push([username, password]));
    expect(announced).toHaveLength(1);
    const [username = '', password = ''] = announced[0] ?? [];
    expect(password.length).toBeGreaterThanOrEqual(20);
    const response = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload: { username, password } });
    expect(response.statusCode).toBe(200);
  });

  it('creates one admin when gateways on one database boot at the same moment', async () => {
    t = await buildTestApp();
    await t.db.write(async (tx) => await tx.delete(users).run());
    const deps = { ...t.deps, config: { ...t.config, adminPassword: undefined } };
    const announced: string[] = [];
    await Promise.all([1, 2, 3].map(async () => await ensureAdmin(deps, (username) => announced.push(username))));
    expect(announced).toHaveLength(1);
    expect((await t.db.select({ n: count() }).from(users).get())?.n).toBe(1);
  });

  it('creates the local node once, also when gateways on one database boot at the same moment', async () => {
    t = await buildTestApp();
    const deps = t.deps;
    await deps.db.write(async (tx) => await tx.delete(nodes).run());
    await Promise.all([1, 2, 3].map(async () => await bootstrap(deps, () => undefined)));
    await bootstrap(t.deps, () => undefined);
    expect((await t.db.select({ n: count() }).from(nodes).get())?.n).toBe(1);
  });
});
