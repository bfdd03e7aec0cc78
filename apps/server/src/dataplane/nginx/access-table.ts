import { hash } from 'node:crypto';
import { cidrToInts, normalizePathLocation } from '@postern/contract';
import type { DesiredAccess } from '../types.js';
import { assertIPv4OrCidr, assertPathPrefix, assertPositiveInt } from '../validate.js';

// What nginx's access module (lua/postern_access.lua) holds, planned from the desired state (docs/ACCESS.md): each
// protected policy as JSON under a ref that changes with its content ("<id>.<hash>"), the cookie key, the revoked
// sessions. Every path and network passes the data plane's validators; a policy that fails is left out, and the
// route table sets its services aside (not served), never serves them unprotected.

export interface AccessTable {
  /** Ref → JSON of the policy, as the Lua module reads it. */
  entries: Map<string, string>;
  /** Policy id → its ref (what a route's `x` names). */
  refOf: Map<number, string>;
  /** Policy id → why it cannot be served. */
  rejected: Map<number, string>;
  /** "<key id> <key, base64>", or null: no key (no access state). */
  key: string | null;
  /** Revoked session id → expiry (unix seconds). */
  revoked: Map<string, number>;
}

export const emptyAccessTable = (): AccessTable => ({
  entries: new Map(),
  refOf: new Map(),
  rejected: new Map(),
  key: null,
  revoked: new Map(),
});

const SID_RE = /^[A-Za-z0-9_-]{16,64}$/;
const KEY_ID_RE = /^[A-Za-z0-9_-]{1,16}$/;

function toNetwork(entry: string): [number, number] {
  return cidrToInts(assertIPv4OrCidr(entry, 'bypass network'));
}

function toPrefix(path: string): string {
  return normalizePathLocation(assertPathPrefix(path, 'bypass path'));
}

export function buildAccessTable(access: DesiredAccess | undefined): AccessTable {
  const table = emptyAccessTable();
  if (access === undefined) return table;
  if (!KEY_ID_RE.test(access.key.id) || Buffer.from(access.key.secret, 'base64').length !== 32)
    throw new Error('invalid access cookie key');
  table.key = `${access.key.id} ${access.key.secret}`;
  for (const policy of access.policies) {
    try {
      const entry = {
        i: assertPositiveInt(policy.id, 'policy id'),
        e: assertPositiveInt(policy.epoch, 'policy epoch'),
        ...(policy.bypassPaths.length > 0 ? { bp: policy.bypassPaths.map(toPrefix) } : {}),
        ...(policy.bypassNetworks.length > 0 ? { bn: policy.bypassNetworks.map(toNetwork) } : {}),
      };
      const json = JSON.stringify(entry);
      const ref = `${entry.i}.${hash('sha256', json, 'base64url').slice(0, 12)}`;
      table.entries.set(ref, json);
      table.refOf.set(policy.id, ref);
    } catch (err) {
      table.rejected.set(policy.id, err instanceof Error ? err.message : String(err));
    }
  }
  for (const [sid, expiry] of access.revoked) if (SID_RE.test(sid)) table.revoked.set(sid, Math.floor(expiry));
  return table;
}
