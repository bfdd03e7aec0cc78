import type { HttpService, ServiceType, TcpService } from '@postern/contract';
import type { AgentApi } from '../api.js';
import { CliError } from '../errors.js';
import {
  hasPosternLabels,
  printable,
  servicesOfContainer,
  type ContainerInfo,
  type DesiredService,
  type LabelProblem,
  type NodeReach,
} from './labels.js';

// One reconciliation pass: the containers' labels against the node's services on the gateway (docs/LABELS.md).
// Level-triggered and stateless across restarts: the agent recognises its services by their `source` (container
// name and label key) as the gateway stores it, so a restarted agent neither duplicates nor forgets them.
//
// Only services whose source says they came from labels are ever touched; anything the operator or `postern expose`
// made is left alone, whatever a label says (a label's service that collides with one is refused by the gateway and
// reported). The gateway enforces the operator's decisions (modules/services/decisions.ts) whatever the agent asks;
// the agent also does not ask: a service the operator disabled stays disabled, one it gave an expiry is not replaced.

export type LabelApi = Pick<
  AgentApi,
  'listServices' | 'createHttpService' | 'createTcpService' | 'setServiceEnabled' | 'deleteService'
>;

type AnyService = (HttpService | TcpService) & { type: ServiceType };

export interface ReconcileOutcome {
  problems: LabelProblem[];
  /** What was done, one line each (for the log). */
  done: string[];
  /** A service was removed (a route or a share of the quota freed): refused creations are worth asking again now. */
  freed: boolean;
}

const PAGE = 100;

async function labelServices(api: LabelApi): Promise<AnyService[]> {
  const all: AnyService[] = [];
  for (const type of ['http', 'tcp'] as const) {
    for (let page = 1; ; page++) {
      const answer =
        type === 'http' ? await api.listServices('http', page, PAGE) : await api.listServices('tcp', page, PAGE);
      all.push(...answer.data.map((service: HttpService | TcpService) => ({ ...service, type })));
      if (answer.data.length === 0 || page * PAGE >= answer.total) break;
    }
  }
  return all.filter((service) => service.source?.kind === 'docker-labels');
}

const idOf = (source: { container: string; key: string }) => `${source.container}/${source.key}`;

/** A creation the gateway refused is asked again after this long (or when its labels change), not at every pass. */
export const RETRY_REFUSED_MS = 10 * 60_000;

/**
 * Creations the gateway refused, by `container/key`: with thousands of labelled containers over a node's quota, each
 * pass would otherwise send thousands of doomed requests.
 */
export type RefusedCreations = Map<string, { digest: string; at: number; message: string }>;

export async function reconcileLabels(
  api: LabelApi,
  containers: readonly ContainerInfo[],
  reach: NodeReach,
  memory: { refused: RefusedCreations; now: number } = { refused: new Map(), now: 0 },
): Promise<ReconcileOutcome> {
  const problems: LabelProblem[] = [];
  const done: string[] = [];
  let freed = false;
  const desired = new Map<string, DesiredService>();
  for (const container of containers) {
    if (!hasPosternLabels(container.labels)) continue;
    const outcome = servicesOfContainer(container, reach);
    problems.push(...outcome.problems);
    for (const service of outcome.services) desired.set(idOf(service.source), service);
  }

  const existing = await labelServices(api);
  const seen = new Set<string>();
  /** Runs one call for a service; a refusal becomes the container's problem, never the pass's end. */
  const attempt = async (about: { container: string; key: string }, what: () => Promise<void>): Promise<boolean> => {
    try {
      await what();
      return true;
    } catch (error) {
      if (!(error instanceof CliError) || error.name === 'TokenRejectedError') throw error;
      problems.push({ container: about.container, key: about.key, message: oneLine(error.message) });
      return false;
    }
  };

  for (const service of existing) {
    const source = service.source;
    if (!source) continue;
    const id = idOf(source);
    const wanted = desired.get(id);
    const label = `${service.type} service ${service.id} "${printable(service.name)}" (${id})`;
    if (
      seen.has(id) ||
      wanted === undefined ||
      wanted.source.digest !== source.digest ||
      wanted.type !== service.type
    ) {
      // Gone, changed, or a second one for the same labels: the gateway says whether the token may delete it.
      if (service.disabledBy === 'admin' || (service.expiresAt !== null && service.expirySetBy !== 'node')) {
        problems.push({
          container: source.container,
          key: source.key,
          message: `${label} is kept as the operator decided (disabled or given an expiry in the console): only the operator can delete it`,
        });
        seen.add(id);
        continue;
      }
      if (await attempt(source, () => api.deleteService(service.type, service.id))) {
        done.push(`removed ${label}${wanted === undefined ? '' : ': its labels changed'}`);
        freed = true;
      } else {
        seen.add(id);
      }
      continue;
    }
    seen.add(id);
    if (wanted.running && !service.enabled) {
      if (service.disabledBy !== 'node') {
        problems.push({
          container: source.container,
          key: source.key,
          message: `${label} stays disabled: the operator disabled it`,
        });
      } else if (await attempt(source, () => api.setServiceEnabled(service.type, service.id, true))) {
        done.push(`enabled ${label}: its container runs`);
      }
    } else if (!wanted.running && service.enabled) {
      if (await attempt(source, () => api.setServiceEnabled(service.type, service.id, false))) {
        done.push(`disabled ${label}: its container stopped`);
      }
    }
  }

  for (const [id, wanted] of desired) {
    // A stopped container's service is created when it starts; one that exists stays (disabled) until it is removed.
    if (seen.has(id) || !wanted.running) continue;
    const refused = memory.refused.get(id);
    if (refused?.digest === wanted.source.digest && memory.now - refused.at < RETRY_REFUSED_MS) {
      problems.push({ container: wanted.source.container, key: wanted.source.key, message: refused.message });
      continue;
    }
    memory.refused.delete(id);
    const before = problems.length;
    await attempt(wanted.source, async () => {
      const created =
        wanted.type === 'http' ? await api.createHttpService(wanted.body) : await api.createTcpService(wanted.body);
      done.push(
        `published ${wanted.type} service ${created.id} "${printable(created.name)}" (${id}) at ${created.publicAccess}`,
      );
    });
    const message = problems.length > before ? problems.at(-1)?.message : undefined;
    if (message !== undefined) memory.refused.set(id, { digest: wanted.source.digest, at: memory.now, message });
  }
  if (freed) memory.refused.clear();
  return { problems, done, freed };
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ');
}
