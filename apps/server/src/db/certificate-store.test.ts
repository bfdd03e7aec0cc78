import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { CertificateRecord } from '../dataplane/certs/renewal.js';
import { buildTestApp, type TestApp } from '../test/build-test-app.js';
import { createDbCertificateStore } from './certificate-store.js';
import { domains } from './schema.js';

let t: TestApp;

beforeEach(async () => {
  t = await buildTestApp();
});
afterEach(async () => {
  await t.cleanup();
});

const record = (over: Partial<CertificateRecord> = {}): CertificateRecord => ({
  state: 'valid',
  issuer: 'CN=Test CA',
  notBefore: '2026-01-01T00:00:00.000Z',
  notAfter: '2026-04-01T00:00:00.000Z',
  fingerprint: 'AA:BB',
  error: null,
  nextAttemptAt: null,
  failures: 0,
  ...over,
});

function addDomain(name: string): void {
  const now = new Date().toISOString();
  t.db.insert(domains).values({ domain: name, ssl: 'certbot', createdAt: now, updatedAt: now }).run();
}

describe('the certificate store', () => {
  test('keeps one record per domain, replaced on put, gone on delete', () => {
    const store = createDbCertificateStore(t.db);
    addDomain('a.example.com');
    addDomain('b.example.com');
    expect(store.get('a.example.com')).toBeNull();
    store.put('a.example.com', record());
    store.put('b.example.com', record({ state: 'failed', error: 'rate limited', failures: 2 }));
    store.put('a.example.com', record({ fingerprint: 'CC:DD' }));
    expect(store.get('a.example.com')).toEqual(record({ fingerprint: 'CC:DD' }));
    expect(store.get('b.example.com')).toEqual(record({ state: 'failed', error: 'rate limited', failures: 2 }));
    store.delete('a.example.com');
    expect(store.get('a.example.com')).toBeNull();
    expect(store.get('b.example.com')).not.toBeNull();
  });

  test('ignores a domain that does not exist, and loses the record with its domain', () => {
    const store = createDbCertificateStore(t.db);
    store.put('gone.example.com', record());
    expect(store.get('gone.example.com')).toBeNull();
    addDomain('c.example.com');
    store.put('c.example.com', record());
    t.db.delete(domains).where(eq(domains.domain, 'c.example.com')).run();
    expect(store.get('c.example.com')).toBeNull();
  });
});
