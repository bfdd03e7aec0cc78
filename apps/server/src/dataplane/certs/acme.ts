import { createPrivateKey } from 'node:crypto';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as acme from 'acme-client';
import { writeFileAtomic, type FileOwner } from '../atomic-write.js';
import type { DataPlaneLogger } from '../types.js';
import { assertHostname } from '../validate.js';
import type { CertificateIssuer } from './self-signed.js';

// ACME (RFC 8555) issuance with acme-client, HTTP-01 only: the CA fetches
// http://<domain>/.well-known/acme-challenge/<token> from port 80, where nginx serves `webroot` for every host.
// The issued chain and the domain's key land in ONE combined PEM replaced by an atomic rename, so nginx (which
// reads the file per handshake) switches to it without a reload and never sees a mismatched key and chain.

export const LETS_ENCRYPT_DIRECTORY = acme.directory.letsencrypt.production;
/** Relative to the data dir; the data plane points nginx's `/.well-known/acme-challenge/` location here. */
export const ACME_WEBROOT_DIR = 'acme-webroot';
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
  /** Directory nginx serves at `/.well-known/acme-challenge/` (its `.well-known/acme-challenge` subdir). */
  webroot?: string;
  /** Owner of the written PEM files (the nginx worker user reads them per handshake). */
  owner?: FileOwner;
  logger: DataPlaneLogger;
  /** How fast acme-client polls the CA for a status change; its default (5-30 s) suits public CAs. */
  pollMinMs?: number;
  pollMaxMs?: number;
  /** Replaces the acme-client Client talking to `directoryUrl` (unit tests: a fake CA, no network). */
  createClient?: () => Promise<AcmeClient>;
}

/** The part of acme-client's Client the issuer uses. */
export type AcmeClient = Pick<acme.Client, 'auto'>;

// RFC 8555 tokens are base64url; anything else from the network must not become a file name.
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export function challengeDir(webroot: string): string {
  return join(webroot, '.well-known', 'acme-challenge');
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
  const webroot = options.webroot ?? join(options.dataDir, ACME_WEBROOT_DIR);
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

  function tokenPath(token: string): string {
    if (!TOKEN.test(token)) throw new Error('the CA sent a malformed challenge token');
    return join(challengeDir(webroot), token);
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
      await mkdir(challengeDir(webroot), { recursive: true, mode: 0o755 });
      // Keep the domain's key: nginx opens the combined PEM twice per handshake (certificate, then key), so a
      // renewal's rename between the two reads would pair an old certificate with a new key. With the same key
      // every interleaving still matches (like certbot's --reuse-key).
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
          // World-readable on purpose: the CA fetches it through nginx, and it is public by design.
          await writeFileAtomic(tokenPath(challenge.token), keyAuthorization, 0o644);
        },
        challengeRemoveFn: async (_authz, challenge) => {
          await unlink(tokenPath(challenge.token)).catch(() => undefined);
        },
      });
      await writeFileAtomic(pemPath, `${key.toString('utf8').trimEnd()}\n${chain.trimStart()}`, 0o600, options.owner);
      logger.info({ domain }, 'certificate: issued by the ACME CA and installed');
    },
  };
}
