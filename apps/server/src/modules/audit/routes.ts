import type { FastifyInstance } from 'fastify';
import { AuditEventSchema, operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { registerOperation } from '../../http/operation.js';
import { openSse } from '../../sse.js';
import { onAuthEvent, type AuthEventKind } from '../auth/auth-events.js';
import { startExpirySweep } from '../services/expiry.js';
import { listAuditEntries, matchesAuditFilter } from './query.js';
import { startAuditRetention } from './retention.js';

/**
 * `GET /api/audit` (a page, newest first) and `GET /api/audit/stream` (each new matching entry as it is recorded).
 * There is deliberately no call that edits or deletes an entry. The timers that belong to the log (retention) and
 * to temporary exposure (the expiry sweep, which records into it) run while the app is up.
 */
export async function auditRoutes(app: FastifyInstance, opts: { deps: AppDeps }): Promise<void> {
  const { deps } = opts;

  registerOperation(app, operations.listAudit, async (request) => {
    await deps.audit.flush();
    return await listAuditEntries(deps, request.query);
  });

  registerOperation(app, operations.auditStream, async (request, reply) => {
    const filter = request.query;
    const connection = openSse(request, reply);
    const unsubscribe = deps.audit.subscribe((entry) => {
      if (matchesAuditFilter(filter, entry)) connection.sendJson(JSON.stringify(AuditEventSchema.parse(entry)));
    });
    await connection.closed;
    unsubscribe();
  });

  // Two-factor sign-in announces its own steps (the password step alone is recorded by the operation hooks).
  const actions: Record<AuthEventKind, string> = {
    'sign_in.second_factor': 'auth.sign-in',
    'sign_in.second_factor_failed': 'auth.sign-in-failed',
    'sign_in.recovery_code_used': 'auth.sign-in',
    'two_factor.enabled': 'auth.two-factor-enabled',
    'two_factor.disabled': 'auth.two-factor-disabled',
  };
  const details: Partial<Record<AuthEventKind, string>> = {
    'sign_in.second_factor': 'with an authentication code',
    'sign_in.second_factor_failed': 'wrong authentication code',
    'sign_in.recovery_code_used': 'with a recovery code',
  };
  const stopAuthEvents = onAuthEvent((event) => {
    const isFailure = event.kind === 'sign_in.second_factor_failed';
    void deps.audit.record({
      actor: isFailure ? { kind: 'anonymous', name: event.username } : { kind: 'admin', name: event.username },
      address: event.ip,
      action: actions[event.kind],
      target: { type: 'user', id: event.userId, name: event.username },
      detail: details[event.kind] ?? null,
    });
  });

  const timers: { stop(): void }[] = [];
  app.addHook('onReady', async () => {
    timers.push(startAuditRetention(deps, app.log), startExpirySweep(deps, app.log));
  });
  app.addHook('onClose', async () => {
    stopAuthEvents();
    for (const timer of timers) timer.stop();
  });
}
