import { can, forbiddenMessage, type Permission, type Role } from '@postern/contract';
import { AppError } from '../../errors.js';

// The one authorisation policy of console sessions (docs/api.md "Accounts and roles"). The table of what each role
// may do is the contract's (`rolePermissions`, shared with the console's `can`); this is where it is enforced:
// - every session route names its permission in the contract's route table, and the global gate
//   (http/authenticate.ts) calls `authorize` with it before the route's handler runs;
// - a service whose resource needs more than its route's permission asks again with the stricter one (a provider
//   that signs accounts in to the console is the owners' to change).
// Deny unless allowed: a role the table does not know, or a permission it does not list, is refused.

/** Whoever the policy is asked about: a console session's account (required: there is no default caller). */
export interface Actor {
  role: Role;
}

/** Throws 403 `forbidden` with a message naming the role and who may, unless the actor's role holds `permission`. */
export function authorize(actor: Actor, permission: Permission): void {
  if (!can(actor.role, permission)) throw new AppError('forbidden', forbiddenMessage(actor.role, permission));
}
