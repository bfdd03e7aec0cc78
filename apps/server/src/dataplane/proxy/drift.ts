import type { AccessTable } from '../nginx/access-table.js';
import { nextTurn, PLAN_SLICE_ROWS } from '../nginx/routes.js';
import type { ControlClient } from '../nginx/control-client.js';
import type { WantedInstance } from '../nginx/stream-instances.js';
import type { AccessDigest } from './access.js';
import { md5 } from './held.js';
import type { PemDigests } from './pem-digests.js';

/** What nginx's access module holds that differs from the table: the key, policies, revoked sessions. */
export async function accessDrift(control: ControlClient, access: AccessTable, key: string): Promise<string[]> {
  const differences: string[] = [];
  const held = await control.get<AccessDigest>('/access/digest');
  const { policies } = held;
  if (held.key !== md5(key)) differences.push('nginx checks visitors with another key than the database says');
  for (const [ref, json] of access.entries)
    if (policies[ref] !== md5(json)) differences.push(`nginx lacks the access policy ${ref}`);
  const revoked = new Set(Array.isArray(held.revoked) ? held.revoked : []);
  const missing = [...access.revoked.keys()].filter((sid) => !revoked.has(sid)).length;
  if (missing > 0) differences.push(`nginx lets in ${missing} revoked visitor session(s)`);
  return differences;
}

/** Pending orders' HTTP-01 answers nginx was not handed (null: unknown, so every one is missing). */
export function challengeDrift(
  pushed: ReadonlyMap<string, string> | null,
  challenges: ReadonlyMap<string, string>,
): string[] {
  const answers = pushed ?? new Map<string, string>();
  return [...challenges]
    .filter(([token, answer]) => answers.get(token) !== answer)
    .map(([token]) => `nginx lacks the ACME answer of a pending order (${token})`);
}

/**
 * Routes and certificates nginx holds (its digest) that differ from `served` and the PEMs on disk (their MD5s from
 * `pems`: a file unchanged since the last check is not read again).
 */
export async function routesAndCertificatesDrift(
  control: ControlClient,
  served: ReadonlyMap<string, string>,
  certNames: readonly string[],
  certsDir: string,
  pems: Pick<PemDigests, 'of'>,
  pause: () => Promise<void> = nextTurn,
): Promise<string[]> {
  const differences: string[] = [];
  const digest = await control.get<{ hosts: Record<string, string>; certs: Record<string, string> }>('/digest');
  const label = (host: string): string => (host === '' ? 'services without a domain' : host);
  // A hash per host: at 100,000 hosts compared in slices, the event loop serving requests between them.
  let inTurn = 0;
  for (const [host, json] of served) {
    if (++inTurn === PLAN_SLICE_ROWS) {
      inTurn = 0;
      await pause();
    }
    const hash = digest.hosts[host];
    if (hash === undefined) differences.push(`nginx lacks the routes of ${label(host)}`);
    else if (hash !== md5(json))
      differences.push(`nginx serves other routes for ${label(host)} than the database says`);
  }
  for (const host of Object.keys(digest.hosts))
    if (!served.has(host)) differences.push(`nginx routes ${label(host)}, which the database does not`);
  const onDisk = await pems.of(certsDir, certNames);
  for (const [i, name] of certNames.entries()) {
    if (++inTurn === PLAN_SLICE_ROWS) {
      inTurn = 0;
      await pause();
    }
    const pemMd5 = onDisk[i];
    if (pemMd5 == null) continue;
    const hash = digest.certs[name];
    if (hash === undefined) differences.push(`nginx lacks the certificate of ${name}`);
    else if (hash !== pemMd5) differences.push(`nginx serves another certificate for ${name} than the one on disk`);
  }
  return differences;
}

/** TCP/UDP instances that should run and do not (unless set aside), and those that run unwanted. */
export function streamsDrift(
  running: ReadonlyMap<string, unknown>,
  wanted: ReadonlyMap<string, WantedInstance>,
  failures: ReadonlyMap<string, string>,
): string[] {
  const differences: string[] = [];
  for (const key of wanted.keys())
    if (!running.has(key) && !failures.has(key)) differences.push(`the instance of ${key} is not running`);
  for (const key of running.keys())
    if (!wanted.has(key)) differences.push(`an instance of ${key} runs, which the database does not want`);
  return differences;
}
