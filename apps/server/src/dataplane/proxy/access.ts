import type { AccessTable } from '../nginx/access-table.js';
import type { ControlClient } from '../nginx/control-client.js';
import { md5, type HeldAccess, type NginxHolds } from './held.js';
import type { Snapshots } from './snapshots.js';

/** GET /access/digest. */
export interface AccessDigest {
  key: string | null;
  /** An empty table arrives as {} (Debian's cjson has no empty array). */
  policies: Record<string, string>;
  revoked: string[] | Record<string, never>;
}

/** Who may reach HTTP services, handed to nginx's access module (docs/ACCESS.md): only what it lacks is pushed. */
export class AccessPusher {
  constructor(
    private readonly control: ControlClient,
    private readonly holds: NginxHolds,
    private readonly snapshots: Snapshots,
  ) {}

  /** Before the routes: new policy entries, the key and revocations, so a route never names a policy nginx lacks. */
  async sync(table: AccessTable): Promise<void> {
    if (table.key === null && table.entries.size === 0 && this.holds.access === null) return;
    try {
      const held = this.holds.access ?? (await this.learn(table));
      const set: Record<string, string> = {};
      for (const [ref, json] of table.entries) if (!held.refs.has(ref)) set[ref] = json;
      const revoke: Record<string, number> = {};
      for (const [sid, expiry] of table.revoked) if (!held.revoked.has(sid)) revoke[sid] = expiry;
      const key = held.key === table.key ? undefined : table.key;
      if (Object.keys(set).length > 0 || Object.keys(revoke).length > 0 || key) {
        const at = this.holds.nextVersion();
        await this.control.post('/access', { version: at, ...(key ? { key } : {}), set, revoke });
        this.snapshots.offerAccess(table, at);
      }
      this.holds.access = {
        key: table.key,
        refs: new Set([...held.refs, ...table.entries.keys()]),
        revoked: new Set([...held.revoked, ...table.revoked.keys()]),
      };
    } catch (err) {
      this.holds.access = null;
      throw err;
    }
  }

  /** After the routes: entries no route names any more. */
  async prune(table: AccessTable): Promise<void> {
    const held = this.holds.access;
    if (held === null) return;
    const del = [...held.refs].filter((ref) => !table.entries.has(ref));
    if (del.length === 0) return;
    await this.control.post('/access', { version: this.holds.nextVersion(), del });
    for (const ref of del) held.refs.delete(ref);
  }

  /** What the access module holds: refs, the key's MD5 (compared as such) and the revoked session ids. */
  private async learn(table: AccessTable): Promise<HeldAccess> {
    const digest = await this.control.get<AccessDigest>('/access/digest');
    const keyMatches = table.key !== null && digest.key === md5(table.key);
    return {
      key: keyMatches ? table.key : null,
      refs: new Set(Object.keys(digest.policies)),
      revoked: new Set(Array.isArray(digest.revoked) ? digest.revoked : []),
    };
  }
}
