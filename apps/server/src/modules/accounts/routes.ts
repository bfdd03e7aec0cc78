import type { FastifyInstance } from 'fastify';
import { operations } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { requireSession } from '../../http/authenticate.js';
import { registerOperation } from '../../http/operation.js';
import type { SessionStreams } from '../auth/session-streams.js';
import { createInvite, listInvites, revokeInvite } from './invites.js';
import { deleteAccount, listAccounts, resetAccountTwoFactor, unlinkAccountIdentity, updateAccount } from './service.js';

// The owners' calls (docs/api.md "Accounts and roles"): accounts and invites. Every route here needs the `accounts`
// permission (the contract's route table), which the global gate checks before the handler runs.

export async function accountRoutes(
  app: FastifyInstance,
  opts: { deps: AppDeps; sessionStreams: SessionStreams },
): Promise<void> {
  const { deps, sessionStreams } = opts;

  registerOperation(app, operations.listAccounts, async ({ query }) => await listAccounts(deps, query));
  registerOperation(app, operations.updateAccount, async (request) => {
    const account = await updateAccount(deps, requireSession(request), request.params.id, request.body);
    // A disabled account's event streams on this gateway end now (others hear the announcement).
    sessionStreams.endStreams();
    return account;
  });
  registerOperation(app, operations.deleteAccount, async (request) => {
    await deleteAccount(deps, requireSession(request), request.params.id);
    sessionStreams.endStreams();
  });
  registerOperation(app, operations.resetAccountTwoFactor, async (request) => {
    const account = await resetAccountTwoFactor(deps, requireSession(request), request.params.id);
    sessionStreams.endStreams();
    return account;
  });
  registerOperation(
    app,
    operations.unlinkAccountIdentity,
    async ({ params }) => await unlinkAccountIdentity(deps, params.id),
  );

  registerOperation(app, operations.listInvites, async ({ query }) => await listInvites(deps, query));
  registerOperation(
    app,
    operations.createInvite,
    async (request) => await createInvite(deps, requireSession(request), request.body),
  );
  registerOperation(app, operations.revokeInvite, async ({ params }) => await revokeInvite(deps, params.id));
}
