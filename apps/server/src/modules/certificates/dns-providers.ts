import { count, eq } from 'drizzle-orm';
import {
  DEFAULT_PROPAGATION_TIMEOUT_SECONDS,
  certificateMessages,
  type DnsProvider,
  type DnsProviderCreate,
  type DnsProviderUpdate,
} from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import type { ReadDb } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { dnsProviders, domains } from '../../db/schema.js';
import { applyChanges } from '../../dataplane-apply.js';
import { badRequest, fieldError, notFound } from '../../errors.js';

// DNS providers answering DNS-01 challenges (admin only). Configured once, used by any number of domains; the one
// secret of each is encrypted with the secret key and never returned. A provider a domain uses cannot be deleted.

type Row = typeof dnsProviders.$inferSelect;

/** The public settings a provider's kind keeps (everything of the request but name, kind, secret and timeout). */
const SETTING_KEYS = [
  'server',
  'port',
  'keyName',
  'algorithm',
  'zone',
  'zoneId',
  'accessKeyId',
  'hostedZoneId',
  'region',
  'serverUrl',
  'username',
  'subdomain',
] as const;

const takenMessage = (name: string): string => `A DNS provider named ${name} already exists`;

function toDnsProvider(row: Row, uses: number): DnsProvider {
  const text = (key: string): string | null => {
    const value = row.settings[key];
    return value === null || value === undefined ? null : String(value);
  };
  const port = row.settings.port;
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    server: text('server'),
    port: typeof port === 'number' ? port : null,
    keyName: text('keyName'),
    algorithm: text('algorithm'),
    zone: text('zone'),
    zoneId: text('zoneId'),
    accessKeyId: text('accessKeyId'),
    hostedZoneId: text('hostedZoneId'),
    region: text('region'),
    serverUrl: text('serverUrl'),
    username: text('username'),
    subdomain: text('subdomain'),
    hasSecret: row.secretEnc !== '',
    propagationTimeoutSeconds: row.propagationTimeoutSeconds,
    domains: uses,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

async function usesOf(db: ReadDb, id: number): Promise<number> {
  return (await db.select({ n: count() }).from(domains).where(eq(domains.dnsProviderId, id)).get())?.n ?? 0;
}

function settingsOf(body: DnsProviderCreate | DnsProviderUpdate, base: Row['settings']): Row['settings'] {
  const settings: Row['settings'] = { ...base };
  for (const key of SETTING_KEYS) {
    const value = body[key];
    if (value !== undefined) settings[key] = value;
  }
  return settings;
}

export async function listDnsProviders(deps: Pick<AppDeps, 'db'>): Promise<DnsProvider[]> {
  const rows = await deps.db.select().from(dnsProviders).orderBy(dnsProviders.id).all();
  const uses = await deps.db
    .select({ id: domains.dnsProviderId, n: count() })
    .from(domains)
    .groupBy(domains.dnsProviderId)
    .all();
  const byId = new Map(uses.map((row) => [row.id, row.n]));
  return rows.map((row) => toDnsProvider(row, byId.get(row.id) ?? 0));
}

export async function getDnsProvider(deps: Pick<AppDeps, 'db'>, id: number): Promise<DnsProvider> {
  const row = await deps.db.select().from(dnsProviders).where(eq(dnsProviders.id, id)).get();
  if (!row) throw notFound('DNS provider');
  return toDnsProvider(row, await usesOf(deps.db, id));
}

export async function createDnsProvider(deps: AppDeps, body: DnsProviderCreate): Promise<DnsProvider> {
  try {
    const row = await deps.db.write(
      async (tx) =>
        await tx
          .insert(dnsProviders)
          .values({
            name: body.name,
            kind: body.kind,
            settings: settingsOf(body, {}),
            secretEnc: deps.secrets.encrypt(body.secret ?? ''),
            propagationTimeoutSeconds: body.propagationTimeoutSeconds ?? DEFAULT_PROPAGATION_TIMEOUT_SECONDS,
          })
          .returning()
          .get(),
    );
    return toDnsProvider(row, 0);
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name));
    throw error;
  }
}

export async function updateDnsProvider(deps: AppDeps, id: number, body: DnsProviderUpdate): Promise<DnsProvider> {
  const current = await deps.db.select().from(dnsProviders).where(eq(dnsProviders.id, id)).get();
  if (!current) throw notFound('DNS provider');
  try {
    await deps.db.write(async (tx) => {
      await tx
        .update(dnsProviders)
        .set({
          ...(body.name === undefined ? {} : { name: body.name }),
          settings: settingsOf(body, current.settings),
          ...(body.secret === undefined ? {} : { secretEnc: deps.secrets.encrypt(body.secret) }),
          ...(body.propagationTimeoutSeconds == null
            ? {}
            : { propagationTimeoutSeconds: body.propagationTimeoutSeconds }),
          updatedAt: deps.now().toISOString(),
        })
        .where(eq(dnsProviders.id, id))
        .run();
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw fieldError('name', takenMessage(body.name ?? current.name));
    throw error;
  }
  // Domains using it order with the new settings from now on; nothing is served differently until then.
  await applyChanges(deps);
  return await getDnsProvider(deps, id);
}

export async function deleteDnsProvider(deps: AppDeps, id: number): Promise<void> {
  const current = await deps.db.select().from(dnsProviders).where(eq(dnsProviders.id, id)).get();
  if (!current) throw notFound('DNS provider');
  await deps.db.write(async (tx) => {
    const uses = (await tx.select({ n: count() }).from(domains).where(eq(domains.dnsProviderId, id)).get())?.n ?? 0;
    if (uses > 0) throw badRequest(certificateMessages.providerInUse(current.name, uses));
    await tx.delete(dnsProviders).where(eq(dnsProviders.id, id)).run();
  });
}
