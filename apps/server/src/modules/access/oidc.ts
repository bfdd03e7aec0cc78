import * as client from 'openid-client';
import type { IdentityProviderDiscovery } from '@postern/contract';
import type { SecretBox } from '../../secrets.js';
import type { identityProviders } from '../../db/schema.js';

// The gateway as an OpenID Connect relying party (openid-client 6): discovery, the authorization code flow with PKCE
// (S256), state and nonce. The library checks the ID token (signature, issuer, audience, expiry, nonce); this file
// only wires it to the provider rows and caches each provider's discovery.

type ProviderRow = typeof identityProviders.$inferSelect;

/** Seconds any one request to a provider may take (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_S = 5;
/** A provider's discovered configuration is reused this long (its keys rotate; its endpoints rarely move). */
const DISCOVERY_TTL_MS = 10 * 60_000;

interface Cached {
  /** The row's `updatedAt` the configuration was made from: an edit discovers again. */
  version: string;
  at: number;
  config: Promise<client.Configuration>;
}

/** Per app (its secret box), per provider id. */
const caches = new WeakMap<SecretBox, Map<number, Cached>>();

function cacheOf(secrets: SecretBox): Map<number, Cached> {
  let cache = caches.get(secrets);
  if (!cache) {
    cache = new Map();
    caches.set(secrets, cache);
  }
  return cache;
}

export function forgetProvider(secrets: SecretBox, id: number): void {
  cacheOf(secrets).delete(id);
}

async function discover(row: ProviderRow, secrets: SecretBox): Promise<client.Configuration> {
  const secret = row.clientSecretEnc === null ? undefined : secrets.decrypt(row.clientSecretEnc);
  return await client.discovery(
    new URL(row.issuer),
    row.clientId,
    undefined,
    secret === undefined ? client.None() : client.ClientSecretPost(secret),
    { timeout: PROVIDER_TIMEOUT_S },
  );
}

/** The provider's configuration, discovered at most every DISCOVERY_TTL_MS (a failed discovery is not kept). */
export async function providerConfig(row: ProviderRow, secrets: SecretBox, now: number): Promise<client.Configuration> {
  const cache = cacheOf(secrets);
  const hit = cache.get(row.id);
  if (hit && hit.version === row.updatedAt && now - hit.at < DISCOVERY_TTL_MS) return await hit.config;
  const config = discover(row, secrets);
  cache.set(row.id, { version: row.updatedAt, at: now, config });
  try {
    const ready = await config;
    ready.timeout = PROVIDER_TIMEOUT_S;
    return ready;
  } catch (error) {
    cache.delete(row.id);
    throw error;
  }
}

/** "Test connection": discovery of an issuer, and what it offers. Throws with the reason when it fails. */
export async function discoverIssuer(issuer: string): Promise<IdentityProviderDiscovery> {
  const config = await client.discovery(new URL(issuer), 'postern-discovery-test', undefined, client.None(), {
    timeout: PROVIDER_TIMEOUT_S,
  });
  const meta = config.serverMetadata();
  return {
    issuer: meta.issuer,
    authorizationEndpoint: meta.authorization_endpoint ?? '',
    tokenEndpoint: meta.token_endpoint ?? '',
    userinfoEndpoint: meta.userinfo_endpoint ?? null,
    scopesSupported: meta.scopes_supported ?? [],
    claimsSupported: meta.claims_supported ?? [],
    supportsPkce: (meta.code_challenge_methods_supported ?? []).includes('S256'),
  };
}

/** What a sign-in needs to remember between the start and the provider's redirect back. */
export interface OidcStart {
  url: string;
  state: string;
  nonce: string;
  verifier: string;
}

export async function startSignIn(
  config: client.Configuration,
  row: ProviderRow,
  redirectUri: string,
): Promise<OidcStart> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const scopes = new Set(['openid', ...row.scopes]);
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: [...scopes].join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url: url.href, state, nonce, verifier };
}

/** Who signed in, as far as the allow-lists and the backend's headers care. */
export interface OidcIdentity {
  subject: string;
  email: string | null;
  /** The provider said the email is not verified: it must not count. */
  emailUnverified: boolean;
  name: string | null;
  groups: string[];
}

function groupsOf(claims: Record<string, unknown> | undefined, claim: string): string[] | null {
  const value = claims?.[claim];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  if (typeof value === 'string') return [value];
  return null;
}

/** Redeems the code of the provider's redirect (`callbackUrl`) and reads who signed in. */
export async function finishSignIn(
  config: client.Configuration,
  row: ProviderRow,
  callbackUrl: URL,
  expected: { state: string; nonce: string; verifier: string },
): Promise<OidcIdentity> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: expected.verifier,
    expectedState: expected.state,
    expectedNonce: expected.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims() as Record<string, unknown> | undefined;
  if (!claims || typeof claims.sub !== 'string') throw new Error('the provider sent no ID token subject');
  let info: Record<string, unknown> = claims;
  let groups = groupsOf(claims, row.groupsClaim);
  // Some providers put email or groups only into userinfo.
  if ((groups === null || typeof claims.email !== 'string') && config.serverMetadata().userinfo_endpoint) {
    const userinfo = (await client.fetchUserInfo(config, tokens.access_token, claims.sub)) as Record<string, unknown>;
    info = { ...userinfo, ...claims };
    groups ??= groupsOf(userinfo, row.groupsClaim);
  }
  const email = typeof info.email === 'string' ? info.email.toLowerCase() : null;
  const name =
    typeof info.preferred_username === 'string'
      ? info.preferred_username
      : typeof info.name === 'string'
        ? info.name
        : null;
  return {
    subject: claims.sub,
    email,
    emailUnverified: info.email_verified === false,
    name,
    groups: groups ?? [],
  };
}
