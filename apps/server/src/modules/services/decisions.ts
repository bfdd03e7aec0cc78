import type { DecisionMaker } from '@postern/contract';
import { AppError } from '../../errors.js';
import type { Caller } from './caller.js';

// A node's token never undoes a decision of the operator's; it may only make things stricter. Per service of its
// node, a token may:
//   - disable it, whoever created it (less exposure; the node's own machine is behind it anyway);
//   - enable it again only if the token itself disabled it (or it expired at an expiry the token set), and never
//     past an expiry the operator set;
//   - delete it only if the token created it and the operator has neither disabled it nor given it an expiry (a
//     delete and a fresh create would otherwise undo either).
// The operator's console is never bound. Who decided is recorded on the row (created_by, disabled_by,
// expiry_set_by); a null where a decision exists (rows from before these columns) counts as the operator's.

/** The decisions stored on a service row. */
export interface ServiceDecisions {
  enabled: boolean;
  expiresAt: string | null;
  createdBy: DecisionMaker;
  disabledBy: DecisionMaker | 'system' | null;
  expirySetBy: DecisionMaker | null;
}

export const OPERATOR_DISABLED_MESSAGE =
  "The gateway's operator disabled this service: only the operator can enable or delete it (in the console)";
export const OPERATOR_EXPIRED_MESSAGE =
  "The gateway's operator set this service's expiry, which has passed: only the operator can publish it again (in the console)";
export const OPERATOR_EXPIRY_MESSAGE =
  "The gateway's operator gave this service an expiry: only the operator can delete it or change its expiry (in the console)";
export const OPERATOR_CREATED_MESSAGE =
  "The gateway's operator created this service: only the operator can delete it (in the console); this node's token can disable it";

const forbidden = (message: string) => new AppError('forbidden', message);

/** Who disabled it, for the rules: unknown (an older row) is the operator. */
const disabler = (row: ServiceDecisions): DecisionMaker | 'system' => row.disabledBy ?? 'admin';
/** Who set its expiry, for the rules: unknown (an older row) is the operator. */
const expirySetter = (row: ServiceDecisions): DecisionMaker => row.expirySetBy ?? 'admin';

/** The token's own decision to lift: it disabled the service, or the service ran out at an expiry the token set. */
function isTokensToLift(row: ServiceDecisions): boolean {
  const by = disabler(row);
  return by === 'node' || (by === 'system' && expirySetter(row) === 'node');
}

export const hasExpired = (row: Pick<ServiceDecisions, 'expiresAt'>, now: Date): boolean =>
  row.expiresAt !== null && Date.parse(row.expiresAt) <= now.getTime();

/** 403 unless `caller` may enable this service. */
export function assertMayEnable(caller: Caller, row: ServiceDecisions, now: Date): void {
  if (caller === 'admin') return;
  if (hasExpired(row, now) && expirySetter(row) !== 'node') throw forbidden(OPERATOR_EXPIRED_MESSAGE);
  if (!row.enabled && !isTokensToLift(row)) throw forbidden(OPERATOR_DISABLED_MESSAGE);
}

/** 403 unless `caller` may delete this service. */
export function assertMayDelete(caller: Caller, row: ServiceDecisions): void {
  if (caller === 'admin') return;
  if (row.createdBy !== 'node') throw forbidden(OPERATOR_CREATED_MESSAGE);
  if (!row.enabled && !isTokensToLift(row)) throw forbidden(OPERATOR_DISABLED_MESSAGE);
  if (row.expiresAt !== null && expirySetter(row) !== 'node') throw forbidden(OPERATOR_EXPIRY_MESSAGE);
}

/**
 * The decision columns after enabling or disabling. Disabling an already disabled service keeps who disabled it
 * (a token must not turn the operator's disable into its own); the operator's disable is the operator's from then on.
 * Enabling past an expiry lifts it (the sweep would disable the service at once).
 */
export function afterSetEnabled(
  caller: Caller,
  row: ServiceDecisions,
  enabled: boolean,
  now: Date,
): Partial<Pick<ServiceDecisions, 'disabledBy' | 'expiresAt' | 'expirySetBy'>> {
  if (enabled) {
    return { disabledBy: null, ...(hasExpired(row, now) ? { expiresAt: null, expirySetBy: null } : {}) };
  }
  if (caller === 'admin') return { disabledBy: 'admin' };
  return row.enabled ? { disabledBy: 'node' } : {};
}

/** Who set an expiry a create or an edit asks for (undefined: unchanged; null: cleared). */
export function expirySetterOf(caller: Caller, expiresAt: string | null | undefined): DecisionMaker | null | undefined {
  if (expiresAt === undefined) return undefined;
  return expiresAt === null ? null : caller;
}
