import { eq } from 'drizzle-orm';
import type { ConfigApplyResult, ConfigDocument, ConfigPlan } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { users } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import type { AuditActor } from '../audit/recorder.js';
import { applySteps, type ApplyContext } from './apply.js';
import { planConfig } from './plan.js';
import { readGatewayState } from './read.js';

// Configuration as code (docs/CONFIG-AS-CODE.md): export, plan and apply, each an operator's call of the API.

export async function exportConfig(deps: AppDeps): Promise<ConfigDocument> {
  return (await readGatewayState(deps.db)).document;
}

export async function planConfigDocument(deps: AppDeps, document: ConfigDocument, prune: boolean): Promise<ConfigPlan> {
  return planConfig(await readGatewayState(deps.db), document, { prune, now: deps.now() }).plan;
}

/** The audit log's actor for a session: the operator by name. */
export async function operatorOf(deps: AppDeps, userId: number): Promise<AuditActor> {
  const user = await deps.db.select({ username: users.username }).from(users).where(eq(users.id, userId)).get();
  return { kind: 'admin', name: user?.username ?? null };
}

/**
 * Plans and, when the plan has no error, carries it out. A document with errors changes nothing (422 naming each
 * problem by its place in the document); a step refused half way answers its own error, saying how far it got.
 */
export async function applyConfigDocument(
  ctx: ApplyContext,
  document: ConfigDocument,
  prune: boolean,
): Promise<ConfigApplyResult> {
  const state = await readGatewayState(ctx.deps.db);
  const { plan, steps } = planConfig(state, document, { prune, now: ctx.deps.now() });
  if (plan.errors.length > 0) {
    throw new AppError(
      'validation',
      'The document cannot be applied',
      plan.errors.map((problem) => ({ field: problem.path, message: problem.message })),
    );
  }
  const outcome = await applySteps(ctx, state, steps);
  return {
    plan: { ...plan, notes: [...plan.notes, ...outcome.notes] },
    applied: outcome.applied,
    tokens: outcome.tokens,
  };
}
