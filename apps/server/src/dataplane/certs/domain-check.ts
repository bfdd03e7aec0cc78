import { randomBytes } from 'node:crypto';
import { promises as dns } from 'node:dns';
import { isIPv4 } from '../validate.js';
import type { ChallengeStore } from './acme.js';

// Before asking a CA for a certificate, check that the domain reaches this gateway: otherwise the HTTP-01
// challenge fails anyway (and burns the CA's rate limit). Either the DNS answer contains the public host's
// address, or a token this gateway just handed nginx to answer comes back through http://<domain>/ (which
// also covers NAT, CDNs and proxies in front of the gateway).

export type DomainCheckResult = { ok: true } | { ok: false; message: string };

export interface Resolver {
  resolve4(host: string): Promise<string[]>;
  resolve6(host: string): Promise<string[]>;
}

export interface DomainCheckOptions {
  /** POSTERN_PUBLIC_HOST: an IPv4 address or a name resolved to its addresses. */
  publicHost: string;
  /** POSTERN_HTTP_PORT: where nginx answers `/.well-known/acme-challenge/`. */
  httpPort: number;
  /** Where nginx's ACME answers come from (the same store the issuer uses). */
  challenges: ChallengeStore;
  resolver?: Resolver;
  fetch?: typeof globalThis.fetch;
  timeoutMs?: number;
}

/** Missing records are an answer (no addresses), not an error. */
async function addressesOf(resolver: Resolver, host: string): Promise<string[]> {
  if (isIPv4(host)) return [host];
  const settle = (lookup: Promise<string[]>): Promise<string[]> => lookup.catch(() => []);
  const [v4, v6] = await Promise.all([settle(resolver.resolve4(host)), settle(resolver.resolve6(host))]);
  return [...v4, ...v6];
}

/** Hands nginx a one-time token and fetches it back through the domain. */
async function isTokenServedThrough(domain: string, options: DomainCheckOptions): Promise<boolean> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const token = `postern-check-${randomBytes(16).toString('hex')}`;
  const content = randomBytes(24).toString('hex');
  await options.challenges.set(token, content);
  try {
    const port = options.httpPort === 80 ? '' : `:${options.httpPort}`;
    const response = await fetchFn(`http://${domain}${port}/.well-known/acme-challenge/${token}`, {
      redirect: 'manual',
      signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
    });
    return response.status === 200 && (await response.text()).trim() === content;
  } catch {
    return false; // unreachable, timed out, refused: the domain does not lead here
  } finally {
    await options.challenges.remove(token).catch(() => undefined);
  }
}

/** Whether `domain` points at this gateway, with an operator-facing message when it does not. */
export async function checkDomainPointsHere(domain: string, options: DomainCheckOptions): Promise<DomainCheckResult> {
  const resolver = options.resolver ?? dns;
  const [domainAddresses, expected] = await Promise.all([
    addressesOf(resolver, domain),
    addressesOf(resolver, options.publicHost),
  ]);
  if (domainAddresses.some((address) => expected.includes(address))) return { ok: true };
  if (domainAddresses.length > 0 && (await isTokenServedThrough(domain, options))) return { ok: true };
  const expectedText = expected.length > 0 ? expected.join(', ') : `the address of ${options.publicHost}`;
  const message =
    domainAddresses.length === 0
      ? `${domain} has no DNS A/AAAA record; point it to this gateway (${expectedText}) or use a self-signed certificate`
      : `${domain} does not point to this gateway (resolves to ${domainAddresses.join(', ')}, expected ${expectedText})`;
  return { ok: false, message };
}
