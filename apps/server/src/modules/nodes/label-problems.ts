import { eq } from 'drizzle-orm';
import type { LabelProblemReport, NodeLabelProblems } from '@postern/contract';
import type { AppDeps } from '../../deps.js';
import { nodeLabelReports } from '../../db/schema.js';
import { getNodeRow } from './repository.js';

// What a node's agent reports about its containers' Docker labels (docs/LABELS.md "Bad labels"), for the console's
// node page: each report replaces the last, so the page shows the problems of the agent's latest pass. The node is
// the token's (a report names no node); the text is the tenant's, checked by the contract as one printable line and
// shown by the console as text.

export async function reportLabelProblems(
  deps: AppDeps,
  nodeId: number,
  problems: LabelProblemReport[],
): Promise<void> {
  const values = { nodeId, checkedAt: deps.now().toISOString(), problems };
  await deps.db.write(
    async (tx) =>
      await tx
        .insert(nodeLabelReports)
        .values(values)
        .onConflictDoUpdate({ target: nodeLabelReports.nodeId, set: { checkedAt: values.checkedAt, problems } }),
  );
}

export async function labelProblemsOf(deps: AppDeps, nodeId: number): Promise<NodeLabelProblems> {
  await getNodeRow(deps, nodeId);
  const row = await deps.db.select().from(nodeLabelReports).where(eq(nodeLabelReports.nodeId, nodeId)).get();
  return row ? { checkedAt: row.checkedAt, problems: row.problems } : { checkedAt: null, problems: [] };
}
