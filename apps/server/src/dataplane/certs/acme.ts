import { createPrivateKey } from 'node:crypto';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as acme from 'acme-client';
import { isWildcardDomainName } from '@postern/contract';
import { writeFileAtomic } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import { assertHostname } from '../validate.js';
import type { AcmeOrderSettings, AcmeSettingsSource, ChallengeStore } from '../../model/certificates.js';
import type { CertificateIssuer } from './self-signed.js';
import { challengeRecordName, createDnsSolver, findZone, waitForTxt, type DnsSolver } from './dns/index.js';
import type { DnsQuery } from './dns/query.js';

// ACME (RFC 8555) issuance with acme-client. HTTP-01: the CA fetches
// http://<domain>/.well-known/acme-challenge/<token> from port 80, where nginx answers from the challenges it was
// handed (ChallengeStore) for every host. DNS-01 (and every wildcard domain): the domain's DNS provider writes
// `_acme-challenge.<domain>` TXT, the gateway waits until every authoritative server of the zone has it
// (dns/propagation.ts), and removes it again once the CA has looked, whatever the outcome. Each domain's CA (its own,
// or the default) and the provider come from `settings` (the database); each CA's account key is one for every
// gateway. The issued chain and the domain's key land in ONE combined PEM replaced by an atomic rename; the data plane
// then hands it to nginx, which serves it without a reload.

export const LETS_ENCRYPT_DIRECTORY = acme.directory.letsencrypt.production;
/** Relative to the data dir: the ACME account key (0600, in a 0700 directory). */
export const ACME_ACCOUNT_DIR = 'acme';

export interface AcmeConfig {
  /** POSTERN_ACME_DIRECTORY; default Let's Encrypt production. */
  directoryUrl?: string;
  /** POSTERN_ACME_EMAIL: contact for expiry notices; optional. */
  email?: string;
  /** POSTERN_ACME_CA_FILE: PEM of an extra CA trusted for the directory's HTTPS (a private or test CA). */
  caFile?: string;
  /**
   * Skip acme-client's own pre-check of the challenge (it fetches the token through the system resolver
   * before telling the CA). Useful when this host cannot resolve its own domains (tests, split DNS).
   */
  skipPrecheck?: boolean;
}

export interface AcmeIssuerOptions extends AcmeConfig {
  dataDir: string;
  /**
   * Each domain's CA, challenge and DNS provider, and the shared account keys (db/acme-settings.ts). Absent: every
   * domain HTTP-01 from `directoryUrl`, the account key in the data dir (tools, tests).
   */
  settings?: AcmeSettingsSource | undefined;
  /** The gateway's resolvers: where DNS-01 finds a zone and its authoritative servers. */
  resolvers?: readonly string[] | undefined;
  /** DNS providers' HTTP calls (unit tests replace it) and DNS questions. */
  fetch?: typeof globalThis.fetch;
  dnsQuery?: DnsQuery;
  /** How often the authoritative servers are asked while a record propagates (default 2 s). */
  propagationIntervalMs?: number;
  /** Where HTTP-01 answers go: nginx serves them on port 80. */
  challenges: ChallengeStore;
  logger: DataPlaneLogger;
  /** How fast acme-client polls the CA for a status change; its default (5-30 s) suits public CAs. */
  pollMinMs?: number;
  pollMaxMs?: number;
  /** Replaces the acme-client Client of a CA (unit tests: a fake CA, no network). */
  createClient?: (settings: AcmeOrderSettings) => Promise<AcmeClient>;
}

/** The part of acme-client's Client the issuer uses. */
export type AcmeClient = Pick<acme.Client, 'auto'>;

// RFC 8555 tokens are base64url; anything else from the network is refused.
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export type { ChallengeStore } from '../../model/certificates.js';

export function assertChallengeToken(token: string): string {
  if (!TOKEN.test(token)) throw new Error('the CA sent a malformed challenge token');
  return token;
}

/** The account key: created once (ECDSA P-256) and kept, so renewals and restarts use the same ACME account. */
export async function loadOrCreateAccountKey(dataDir: string): Promise<Buffer> {
  const dir = join(dataDir, ACME_ACCOUNT_DIR);
  const path = join(dir, 'account.key');
  const existing = await readFile(path).catch(() => null);
  if (existing !== null) return existing;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const key = await acme.crypto.createPrivateEcdsaKey('P-256');
  await writeFileAtomic(path, key, 0o600);
  return key;
}

/**
 * acme-client talks through one shared axios instance: trusting an extra CA means giving that instance an
 * agent that trusts the public roots plus the extra CA (never "trust everything").
 */
async function trustExtraCa(caFile: string): Promise<void> {
  const extra = await readFile(caFile, 'utf8');
  acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, extra], keepAlive: true });
}

/** The reason a CA (or the network) gave, as one line for the API and the log. */
export function describeAcmeError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s+/g, ' ').trim().slice(0, 500) || 'ACME issuance failed';
}

/** The private key block of the PEM nginx serves now (self-signed placeholder or last issued), if usable. */
async function readPrivateKey(pemPath: string, logger: DataPlaneLogger): Promise<Buffer | null> {
  const pem = await readFile(pemPath, 'utf8').catch(() => null);
  const block = pem?.match(/-----BEGIN (EC |RSA )?PRIVATE KEY-----[\s\S]+?-----END \1PRIVATE KEY-----/)?.[0];
  if (!block) return null;
  try {
    createPrivateKey(block);
  } catch {
    // A corrupt key cannot sign the CSR; a new key replaces it, and with it the whole (unusable) PEM.
    logger.warn({ pemPath }, 'certificate: the served private key is unreadable; issuing with a new key');
    return null;
  }
  return Buffer.from(`${block}\n`);
}

/** How the DNS-01 record is waited for on the authoritative servers. */
function propagation(options: AcmeIssuerOptions, timeoutSeconds: number) {
  return {
    resolvers: options.resolvers ?? [],
    timeoutMs: timeoutSeconds * 1000,
    ...(options.propagationIntervalMs === undefined ? {} : { intervalMs: options.propagationIntervalMs }),
    ...(options.dnsQuery === undefined ? {} : { query: options.dnsQuery }),
  };
}

export function createAcmeIssuer(options: AcmeIssuerOptions): CertificateIssuer {
  const { logger } = options;
  const defaultDirectory = options.directoryUrl ?? LETS_ENCRYPT_DIRECTORY;
  /** One client per CA (and EAB key id) for the process: it remembers the account URL, so it registers once. */
  const clients = new Map<string, Promise<AcmeClient>>();
  let trusted: Promise<void> | null = null;

  async function accountKeyFor(directoryUrl: string): Promise<Buffer> {
    if (options.settings === undefined) return loadOrCreateAccountKey(options.dataDir);
    // The key this gateway used before accounts were shared is offered for the default CA: its account goes on.
    return options.settings.accountKey(directoryUrl, async () => {
      const legacy =
        directoryUrl === defaultDirectory
          ? await readFile(join(options.dataDir, ACME_ACCOUNT_DIR, 'account.key')).catch(() => null)
          : null;
      return legacy ?? (await acme.crypto.createPrivateEcdsaKey('P-256'));
    });
  }

  async function createDefaultClient(settings: AcmeOrderSettings): Promise<AcmeClient> {
    if (options.caFile !== undefined) {
      const caFile = options.caFile;
      trusted ??= trustExtraCa(caFile);
      await trusted;
    }
    return new acme.Client({
      directoryUrl: settings.directoryUrl,
      accountKey: await accountKeyFor(settings.directoryUrl),
      ...(settings.eab === undefined ? {} : { externalAccountBinding: settings.eab }),
      ...(options.pollMinMs === undefined ? {} : { backoffMin: options.pollMinMs }),
      ...(options.pollMaxMs === undefined ? {} : { backoffMax: options.pollMaxMs }),
    });
  }

  function clientFor(settings: AcmeOrderSettings): Promise<AcmeClient> {
    const key = `${settings.directoryUrl} ${settings.eab?.kid ?? ''}`;
    let client = clients.get(key);
    if (client === undefined) {
      client = (options.createClient ?? createDefaultClient)(settings).catch((err: unknown) => {
        clients.delete(key);
        throw err;
      });
      clients.set(key, client);
    }
    return client;
  }

  function solverFor(settings: AcmeOrderSettings, domain: string): DnsSolver {
    if (settings.dns === undefined) throw new Error(`${domain} uses a DNS challenge but has no DNS provider`);
    const propagate = propagation(options, settings.dns.propagationTimeoutSeconds);
    return createDnsSolver(settings.dns, {
      fetch: options.fetch ?? globalThis.fetch,
      findZone: async (name) => (await findZone(name, propagate)).zone,
    });
  }

  return {
    async issue(domain, pemPath) {
      if (!isWildcardDomainName(domain)) assertHostname(domain, 'domain');
      const settings: AcmeOrderSettings = (await options.settings?.orderSettings(domain)) ?? {
        directoryUrl: defaultDirectory,
        email: options.email,
        challenge: 'http-01',
      };
      // A wildcard can only be proven through DNS (RFC 8555 §8.4 and every CA's rules).
      const challenge = isWildcardDomainName(domain) ? 'dns-01' : settings.challenge;
      const solver = challenge === 'dns-01' ? solverFor(settings, domain) : null;
      const acmeClient = await clientFor(settings);
      // Keep the domain's key (like certbot's --reuse-key): a renewal never changes what clients may have pinned.
      const key = (await readPrivateKey(pemPath, logger)) ?? (await acme.crypto.createPrivateEcdsaKey('P-256'));
      const [, csr] = await acme.crypto.createCsr({ commonName: domain, altNames: [domain] }, key);
      logger.info(
        { domain, directoryUrl: settings.directoryUrl, challenge },
        'certificate: requesting from the ACME CA',
      );
      const email = settings.email ?? options.email;
      const chain = await acmeClient.auto({
        csr,
        ...(email === undefined ? {} : { email }),
        termsOfServiceAgreed: true,
        challengePriority: [challenge],
        // DNS-01 waits for every authoritative server itself (below); acme-client's check asks a caching resolver.
        skipChallengeVerification: solver !== null || (options.skipPrecheck ?? false),
        challengeCreateFn: async (authz, acmeChallenge, keyAuthorization) => {
          if (solver === null || settings.dns === undefined) {
            await options.challenges.set(assertChallengeToken(acmeChallenge.token), keyAuthorization);
            return;
          }
          const record = challengeRecordName(authz.identifier.value);
          await solver.present(record, keyAuthorization);
          logger.info({ domain, record }, 'certificate: DNS-01 record written; waiting for the authoritative servers');
          await waitForTxt(
            record,
            keyAuthorization,
            'present',
            propagation(options, settings.dns.propagationTimeoutSeconds),
          );
        },
        challengeRemoveFn: async (authz, acmeChallenge, keyAuthorization) => {
          if (solver === null) {
            await options.challenges.remove(assertChallengeToken(acmeChallenge.token)).catch(() => undefined);
            return;
          }
          const record = challengeRecordName(authz.identifier.value);
          await solver.cleanup(record, keyAuthorization).then(
            () => logger.info({ domain, record }, 'certificate: DNS-01 record removed'),
            (err: unknown) =>
              logger.warn(
                { domain, record, reason: describeAcmeError(err) },
                'certificate: could not remove the DNS-01 record',
              ),
          );
        },
      });
      await writeFileAtomic(pemPath, `${key.toString('utf8').trimEnd()}\n${chain.trimStart()}`, 0o600);
      logger.info({ domain }, 'certificate: issued by the ACME CA and installed');
    },
  };
}
