import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlClient } from '../nginx/control-client.js';
import { PLAN_SLICE_ROWS } from '../nginx/routes.js';
import { routesAndCertificatesDrift } from './drift.js';
import { md5 } from './held.js';
import { PemDigests } from './pem-digests.js';

describe('the drift check compares what nginx holds in slices', () => {
  const count = 2 * PLAN_SLICE_ROWS + 7;
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'postern-drift-'));
    await writeFile(join(dir, 'a.test.pem'), 'PEM of a.test');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('finds every difference, giving the event loop back every slice of hosts', async () => {
    const served = new Map(Array.from({ length: count }, (_, i) => [`h${i}.test`, `[{"s":${i + 1}}]`]));
    const hosts = Object.fromEntries([...served].map(([host, json]) => [host, md5(json)]));
    // nginx lacks one host, serves another differently, routes one the database does not, and an old certificate.
    delete hosts['h5.test'];
    hosts['h4000.test'] = md5('[]');
    hosts['gone.test'] = md5('[]');
    const control = {
      get: () => Promise.resolve({ hosts, certs: { 'a.test': md5('old') } }),
    } as unknown as ControlClient;
    let pauses = 0;
    const pause = (): Promise<void> => {
      pauses++;
      return Promise.resolve();
    };
    const differences = await routesAndCertificatesDrift(control, served, ['a.test'], dir, new PemDigests(), pause);
    expect(differences).toEqual([
      'nginx lacks the routes of h5.test',
      'nginx serves other routes for h4000.test than the database says',
      'nginx routes gone.test, which the database does not',
      'nginx serves another certificate for a.test than the one on disk',
    ]);
    expect(pauses).toBe(Math.floor((count + 1) / PLAN_SLICE_ROWS));
  });
});
