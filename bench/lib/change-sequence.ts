import { operations, type ApiClient } from '@postern/contract';
import type { DesiredState } from '@postern/server/src/dataplane/types.js';

// The change sequence of propagation.ts, shared with its client process (lib/change-clients.ts): plain API calls,
// nothing of the gateway's process.

/** Where a sequence's changes go: a gateway's HTTP API and the node the services are created on. */
export interface ChangeTarget {
  api: ApiClient;
  nodeId: number;
  /** Path → service id of what a sequence published through this target. */
  ids: Map<string, number>;
}

/** One change made through a gateway's HTTP API. */
export type Change = (target: ChangeTarget) => Promise<void>;

export const DOMAIN = 'bench.example.com';

/**
 * Changes in groups: create /c<k>, edit its backend port, delete /c<k-1>. The newest /c<k> always stays, so any
 * desired state tells exactly how far into the sequence it is, even when a gateway coalesced several changes into
 * one apply (a create, edit and delete of one service in one apply would leave no trace).
 */
export class ChangeSequence {
  readonly changes: Change[] = [];

  constructor(
    count: number,
    private readonly offset: number,
  ) {
    for (let k = 0; this.changes.length < count; k++) {
      const path = this.path(k);
      this.changes.push(async (gw) => {
        const created = await gw.api.call(operations.createHttpService, {
          params: { nodeId: gw.nodeId },
          body: { name: `c${offset + k}`, domain: DOMAIN, pathLocation: path, backendPort: 8080 },
        });
        gw.ids.set(path, created.id);
      });
      this.changes.push(async (gw) => {
        await gw.api.call(operations.updateHttpService, {
          params: { nodeId: gw.nodeId, id: idOf(gw, path) },
          body: { domain: DOMAIN, pathLocation: path, backendPort: this.editedPort(k) },
        });
      });
      if (k === 0) continue;
      const previous = this.path(k - 1);
      this.changes.push(async (gw) => {
        await gw.api.call(operations.deleteService, {
          params: { nodeId: gw.nodeId, type: 'http', id: idOf(gw, previous) },
        });
      });
    }
    this.changes.length = count;
  }

  private path(k: number): string {
    return `/c${this.offset + k}`;
  }

  private editedPort(k: number): number {
    return 20_000 + ((this.offset + k) % 40_000);
  }

  /** Index of the last change of the sequence `state` contains (-1: none). */
  progress(state: DesiredState): number {
    const ports = new Map<number, number>();
    for (const route of state.http) {
      const match = /^\/c(\d+)$/.exec(route.pathLocation);
      if (match) ports.set(Number(match[1]) - this.offset, route.backendPort);
    }
    const newest = Math.max(-1, ...[...ports.keys()].filter((k) => k >= 0 && k < 10_000));
    if (newest < 0) return -1;
    const created = newest === 0 ? 0 : 3 * newest - 1;
    if (newest > 0 && !ports.has(newest - 1)) return created + 2;
    return ports.get(newest) === this.editedPort(newest) ? created + 1 : created;
  }
}

function idOf(target: ChangeTarget, path: string): number {
  const id = target.ids.get(path);
  if (id === undefined) throw new Error(`no service at ${path}`);
  return id;
}
