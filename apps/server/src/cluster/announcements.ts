import type { Store } from '../db/client.js';
import type { DataPlane } from '../dataplane/types.js';
import { createAcmeAcknowledger } from './acme-answers.js';

// A change made through another gateway on the same database reaches this one as an announcement (PostgreSQL's
// NOTIFY, db/postgres.ts): this gateway applies its own data plane on it (the reconciler merges bursts), then says
// which HTTP-01 answers its nginx serves, so the holder of the `certificates` lease can let the CA ask
// (acme-answers.ts). A lost announcement is caught by the drift check (dataplane/supervisor.ts).

export function followAnnouncements(
  deps: { db: Store; dataPlane: Pick<DataPlane, 'apply'>; gatewayId: number },
  onError: (err: unknown) => void,
): () => void {
  const acknowledge = createAcmeAcknowledger(deps.db, deps.gatewayId);
  return deps.db.onAnnounce(() => {
    deps.dataPlane
      .apply()
      .then((result) => (result.challenges ? acknowledge(result.challenges) : undefined))
      .catch(onError);
  });
}
