import type { AuditLog, AuditRecord } from '../audit/recorder.js';

// Visitor events in the audit log (docs/ACCESS.md "Audit"), limited so a flood cannot fill it: per gateway at most
// ACTION_MAX entries of one action per window and CLIENT_MAX per client address; the rest are counted and written as
// one `access.suppressed` entry per action when its window ends.

export const VISITOR_AUDIT_WINDOW_MS = 10_000;
export const ACTION_MAX = 20;
export const CLIENT_MAX = 3;

interface Window {
  started: number;
  written: number;
  perClient: Map<string, number>;
  suppressed: number;
  suppressedClients: Set<string>;
}

export interface VisitorAudit {
  record(entry: AuditRecord & { address: string }): Promise<void>;
  /** Writes the summaries of windows that have ended (also called by record). */
  flush(): Promise<void>;
}

export function createVisitorAudit(audit: AuditLog, now: () => number = Date.now): VisitorAudit {
  const windows = new Map<string, Window>();

  async function flush(): Promise<void> {
    const at = now();
    for (const [action, window] of windows) {
      if (at - window.started < VISITOR_AUDIT_WINDOW_MS) continue;
      windows.delete(action);
      if (window.suppressed === 0) continue;
      await audit.record({
        actor: { kind: 'system' },
        action: 'access.suppressed',
        detail: `${window.suppressed} more ${action} entries from ${window.suppressedClients.size} address(es) left out within ${VISITOR_AUDIT_WINDOW_MS / 1000} s`,
      });
    }
  }

  return {
    flush,
    async record(entry) {
      await flush();
      let window = windows.get(entry.action);
      if (!window) {
        window = { started: now(), written: 0, perClient: new Map(), suppressed: 0, suppressedClients: new Set() };
        windows.set(entry.action, window);
      }
      const ofClient = window.perClient.get(entry.address) ?? 0;
      if (window.written >= ACTION_MAX || ofClient >= CLIENT_MAX) {
        // The summary is written when the window ends, also when nothing else comes to flush it.
        if (window.suppressed === 0)
          setTimeout(
            () => void flush().catch(() => undefined),
            window.started + VISITOR_AUDIT_WINDOW_MS - now(),
          ).unref();
        window.suppressed++;
        window.suppressedClients.add(entry.address);
        return;
      }
      window.written++;
      window.perClient.set(entry.address, ofClient + 1);
      await audit.record(entry);
    },
  };
}
