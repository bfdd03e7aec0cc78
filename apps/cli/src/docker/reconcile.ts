import {
  accessMessages,
  type AccessPolicy,
  type HttpService,
  type ServiceAccess,
  type ServiceAccessUpdate,
  type ServiceType,
  type TcpService,
} from '@postern/contract';
import type { AgentApi } from '../api.js';
import { accessOptionOf } from '../commands/access.js';
import { CliError, FieldsRefusedError } from '../errors.js';
import {
  accessLabelOf,
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
  | 'listServices'
  | 'createHttpService'
  | 'createTcpService'
  | 'setServiceEnabled'
  | 'deleteService'
  | 'getServiceAccess'
  | 'updateServiceAccess'
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

/**
 * The access policy settled for each label-made HTTP service, by service id: what its labels asked (canonical JSON)
 * and how that went. Not asked again until the labels change or the agent restarts (then one read per service).
 */
export type SettledAccess = Map<number, { asked: string; servable: boolean; problem?: string }>;

/**
 * The access policies of one pass: each label-made HTTP service's settled once per labels (see SettledAccess), the
 * services it saw remembered so that the others are forgotten at the end.
 */
class AccessSettler {
  private readonly touched = new Set<number>();

  constructor(
    private readonly api: LabelApi,
    private readonly settled: SettledAccess,
    private readonly problems: LabelProblem[],
    private readonly done: string[],
  ) {}

  /**
   * Gives a label-made HTTP service the access policy its labels ask for (`inherit` without access labels); whether it
   * may be served: not while a stricter policy its labels ask for is refused. A policy the operator set stays (the
   * gateway refuses the token anyway): reported when the labels ask for another one.
   */
  async settle(id: number, wanted: DesiredService, label: string): Promise<boolean> {
    if (wanted.type !== 'http') return true;
    this.touched.add(id);
    const ask: ServiceAccessUpdate = wanted.access ?? { mode: 'inherit' };
    const asked = JSON.stringify(ask);
    const about = { container: wanted.source.container, key: wanted.source.key };
    let known = this.settled.get(id);
    if (known?.asked !== asked) {
      try {
        known = { asked, ...(await applyAccess(this.api, id, ask, wanted.access !== undefined, label, this.done)) };
      } catch (error) {
        if (!(error instanceof CliError) || error.name === 'TokenRejectedError') throw error;
        const byOperator =
          error instanceof FieldsRefusedError &&
          error.fieldErrors.some((field) => field.message === accessMessages.setByOperator);
        const refused =
          error instanceof FieldsRefusedError
            ? error.fieldErrors
                .map(
                  ({ field, message }) =>
                    `${accessOptionOf(field, (option) => accessLabelOf(about.key, option))}: ${message}`,
                )
                .join('; ')
            : oneLine(error.message);
        known = byOperator
          ? {
              asked,
              servable: true,
              problem: `${label}: its access policy is kept as the operator set it in the console; its access labels are not applied`,
            }
          : { asked, servable: ask.mode === 'inherit', problem: `${label}: access policy refused: ${refused}` };
        // A refusal of what was asked stands until the labels change; anything else is asked again next pass.
        if (!(error instanceof FieldsRefusedError)) {
          this.problems.push({ ...about, message: known.problem ?? '' });
          return known.servable;
        }
      }
      this.settled.set(id, known);
    }
    if (known.problem !== undefined) this.problems.push({ ...about, message: known.problem });
    return known.servable;
  }

  /** Services gone or no longer the labels' are forgotten (read again should they come back). */
  forgetUntouched(): void {
    for (const id of this.settled.keys()) if (!this.touched.has(id)) this.settled.delete(id);
  }
}

/** What the containers' labels ask for, by `container/key`; labels that make no service add their problems. */
function desiredServices(
  containers: readonly ContainerInfo[],
  reach: NodeReach,
  problems: LabelProblem[],
): Map<string, DesiredService> {
  const desired = new Map<string, DesiredService>();
  for (const container of containers) {
    if (!hasPosternLabels(container.labels)) continue;
    const outcome = servicesOfContainer(container, reach);
    problems.push(...outcome.problems);
    for (const service of outcome.services) desired.set(idOf(service.source), service);
  }
  return desired;
}

export async function reconcileLabels(
  api: LabelApi,
  containers: readonly ContainerInfo[],
  reach: NodeReach,
  memory: { refused: RefusedCreations; now: number; access?: SettledAccess } = { refused: new Map(), now: 0 },
): Promise<ReconcileOutcome> {
  const settled: SettledAccess = memory.access ?? (new Map() as SettledAccess);
  const problems: LabelProblem[] = [];
  const done: string[] = [];
  let freed = false;
  const desired = desiredServices(containers, reach, problems);
  const access = new AccessSettler(api, settled, problems, done);

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
    const servable = await access.settle(service.id, wanted, label);
    if (wanted.running && !service.enabled) {
      if (!servable) continue;
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
      // With an access policy it is created disabled and enabled once the policy is in place: never served without.
      const guarded = wanted.type === 'http' && wanted.access !== undefined;
      const created =
        wanted.type === 'http'
          ? await api.createHttpService(guarded ? { ...wanted.body, enabled: false } : wanted.body)
          : await api.createTcpService(wanted.body);
      const label = `${wanted.type} service ${created.id} "${printable(created.name)}" (${id})`;
      done.push(
        `published ${label} at ${created.publicAccess}${guarded ? ' (disabled until its access policy is set)' : ''}`,
      );
      if (guarded && (await access.settle(created.id, wanted, label))) {
        await api.setServiceEnabled('http', created.id, true);
        done.push(`enabled ${label}: its access policy is set`);
      }
    });
    const message = problems.length > before ? problems.at(-1)?.message : undefined;
    if (message !== undefined) memory.refused.set(id, { digest: wanted.source.digest, at: memory.now, message });
  }
  if (freed) memory.refused.clear();
  access.forgetUntouched();
  return { problems, done, freed };
}

/** Reads the service's policy and sends what the labels ask only when it differs (no write, no audit entry, else). */
async function applyAccess(
  api: LabelApi,
  id: number,
  ask: ServiceAccessUpdate,
  labelled: boolean,
  label: string,
  done: string[],
): Promise<{ servable: boolean; problem?: string }> {
  const current = await api.getServiceAccess(id);
  // The operator's policy on a service whose labels ask for none: nothing to say, nothing to send.
  if (!labelled && current.setBy === 'admin') return { servable: true };
  let body = ask;
  if (ask.mode === 'protected' && ask.providerId == null && needsSignIn(ask)) {
    const providerId = current.domainPolicy?.providerId ?? null;
    if (providerId === null)
      return {
        servable: false,
        problem: `${label}: its allow-email, allow-email-domain and allow-group labels need an identity provider and the domain's policy names none: add postern.http.access.sso-provider (ask the gateway's operator which)`,
      };
    body = { ...ask, providerId };
  }
  if (sameAsOwn(current, body)) return { servable: true };
  await api.updateServiceAccess(id, body);
  done.push(
    `set the access policy of ${label} to ${body.mode ?? 'protected'}${labelled ? '' : ': its access labels are gone'}`,
  );
  return { servable: true };
}

const needsSignIn = (body: ServiceAccessUpdate) =>
  (body.allowEmails?.length ?? 0) + (body.allowEmailDomains?.length ?? 0) + (body.allowGroups?.length ?? 0) > 0;

/** Whether the service's own policy already is what is asked (fields the labels leave out are not compared). */
function sameAsOwn(current: ServiceAccess, ask: ServiceAccessUpdate): boolean {
  const own = current.own;
  if (ask.mode === 'inherit') return own === null;
  if (own === null || own.mode !== ask.mode) return false;
  if (ask.mode === 'public') return true;
  const sameList = (a: readonly string[] | undefined, b: readonly string[]) =>
    JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...b].sort());
  const lists: [keyof ServiceAccessUpdate & keyof AccessPolicy, readonly string[] | undefined][] = [
    ['allowEmails', ask.allowEmails],
    ['allowEmailDomains', ask.allowEmailDomains],
    ['allowGroups', ask.allowGroups],
    ['bypassPaths', ask.bypassPaths],
    ['bypassNetworks', ask.bypassNetworks],
  ];
  return (
    (ask.providerId ?? null) === own.providerId &&
    (ask.shareLinks ?? false) === own.shareLinks &&
    (ask.sessionSeconds === undefined || ask.sessionSeconds === own.sessionSeconds) &&
    lists.every(([field, value]) => sameList(value, own[field] as string[]))
  );
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, '; ');
}
