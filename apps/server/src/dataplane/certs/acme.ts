import { createPrivateKey } from 'node:crypto';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as acme from 'acme-client';
import { writeFileAtomic } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import { assertHostname } from '../validate.js';
import type { ChallengeStore } from '../../model/certificates.js';
import type { CertificateIssuer } from './self-signed.js';

// ACME (RFC 8555) issuance with acme-client, HTTP-01 only: the CA fetches
// http://<domain>/.well-known/acme-challenge/<token> from port 80, where nginx answers from the challenges it was
// handed (ChallengeStore) for every host. The issued chain and the domain's key land in ONE combined PEM replaced
// by an atomic rename; the data plane then hands it to nginx, which serves it without a reload.

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
  /** Where HTTP-01 answers go: nginx serves them on port 80. */
  challenges: ChallengeStore;
  logger: DataPlaneLogger;
  /** How fast acme-client polls the CA for a status change; its default (5-30 s) suits public CAs. */
  pollMinMs?: number;
  pollMaxMs?: number;
  /** Replaces the acme-client Client talking to `directoryUrl` (unit tests: a fake CA, no network). */
  createClient?: () => Promise<AcmeClient>;
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

export function createAcmeIssuer(options: AcmeIssuerOptions): CertificateIssuer {
  const { logger } = options;
  const directoryUrl = options.directoryUrl ?? LETS_ENCRYPT_DIRECTORY;
  let client: Promise<AcmeClient> | null = null;

  async function createDefaultClient(): Promise<AcmeClient> {
    if (options.caFile !== undefined) await trustExtraCa(options.caFile);
    return new acme.Client({
      directoryUrl,
      accountKey: await loadOrCreateAccountKey(options.dataDir),
      ...(options.pollMinMs === undefined ? {} : { backoffMin: options.pollMinMs }),
      ...(options.pollMaxMs === undefined ? {} : { backoffMax: options.pollMaxMs }),
    });
  }

  /** The private key block of the PEM nginx serves now (self-signed placeholder or last issued), if usable. */
  async function readPrivateKey(pemPath: string): Promise<Buffer | null> {
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

  return {
    async issue(domain, pemPath) {
      assertHostname(domain, 'domain');
      // One client for the process: it remembers the account URL, so the account is registered once.
      client ??= (options.createClient ?? createDefaultClient)().catch((err: unknown) => {
        client = null;
        throw err;
      });
      const acmeClient = await client;
      // Keep the domain's key (like certbot's --reuse-key): a renewal never changes what clients may have pinned.
      const key = (await readPrivateKey(pemPath)) ?? (await acme.crypto.createPrivateEcdsaKey('P-256'));
      const [, csr] = await acme.crypto.createCsr({ commonName: domain, altNames: [domain] }, key);
      logger.info({ domain, directoryUrl }, 'certificate: requesting from the ACME CA');
      const chain = await acmeClient.auto({
        csr,
        ...(options.email === undefined ? {} : { email: options.email }),
        termsOfServiceAgreed: true,
        challengePriority: ['http-01'],
        skipChallengeVerification: options.skipPrecheck ?? false,
        challengeCreateFn: async (_authz, challenge, keyAuthorization) => {
          await options.challenges.set(assertChallengeToken(challenge.token), keyAuthorization);
        },
        challengeRemoveFn: async (_authz, challenge) => {
          await options.challenges.remove(assertChallengeToken(challenge.token)).catch(() => undefined);
        },
      });
      await writeFileAtomic(pemPath, `${key.toString('utf8').trimEnd()}\n${chain.trimStart()}`, 0o600);
      logger.info({ domain }, 'certificate: issued by the ACME CA and installed');
    },
  };
}
