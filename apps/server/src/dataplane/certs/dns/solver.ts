import type { DnsProviderConfig } from '../../../model/certificates.js';
import { isDomainName } from '@postern/contract';

// The part every DNS provider shares: what a challenge record is, and the checks every value passes before it
// reaches a provider (an nsupdate script, an API body): a record name that is `_acme-challenge.` + a domain, a value
// that is a base64url SHA-256 digest (RFC 8555 §8.4). Nothing else ever gets there, whatever a CA or a row says.

export interface DnsSolver {
  /** Writes the TXT record `value` at `recordName`. */
  present(recordName: string, value: string): Promise<void>;
  /** Removes it again (also after a failed order); a record already gone is fine. */
  cleanup(recordName: string, value: string): Promise<void>;
}

export interface SolverDeps {
  fetch: typeof globalThis.fetch;
  /** The zone holding a record name (the SOA the resolvers give), for providers that address zones. */
  findZone: (recordName: string) => Promise<string>;
}

const VALUE_RE = /^[A-Za-z0-9_-]{43}$/;

/** `_acme-challenge.<domain>`, or throws: the name is built by us, so anything else is a bug or an attack. */
export function assertRecordName(name: string): string {
  const prefix = '_acme-challenge.';
  if (!name.startsWith(prefix) || !isDomainName(name.slice(prefix.length))) {
    throw new Error(`refusing DNS record name ${JSON.stringify(name)}`);
  }
  return name;
}

/** A DNS-01 value: the base64url SHA-256 digest of the key authorisation (43 characters). */
export function assertTxtValue(value: string): string {
  if (!VALUE_RE.test(value)) throw new Error('refusing a DNS-01 value that is not a base64url SHA-256 digest');
  return value;
}

/** The record name for a domain's challenge; a wildcard's is its base name's (RFC 8555 §8.4). */
export function challengeRecordName(domain: string): string {
  return assertRecordName(`_acme-challenge.${domain.replace(/^\*\./, '')}`);
}

/** The provider's one-line account of a failed call, prefixed with its name. */
export function providerError(config: Pick<DnsProviderConfig, 'name'>, what: string): Error {
  return new Error(`DNS provider ${config.name}: ${what.replace(/\s+/g, ' ').trim().slice(0, 400)}`);
}

export function setting(config: DnsProviderConfig, key: string): string | undefined {
  const value = config.settings[key];
  return value === null || value === undefined || value === '' ? undefined : String(value);
}
