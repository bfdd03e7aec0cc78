import { randomUUID } from 'node:crypto';
import {
  notificationEventOf,
  type NotificationItem,
  type NotificationPayload,
  type NotificationSeverity,
  type NotificationType,
} from '@postern/contract';

// Messages as data (NotificationPayload, the generic webhook's JSON) with their title and plain text, which chat,
// ntfy and e-mail channels show. Pure functions: every fact comes in as an argument.

export interface Origin {
  /** This gateway's name. */
  gateway: string;
  consoleUrl: string;
  now: Date;
}

/** `2026-11-26 03:04:05 UTC` */
export function formatTime(iso: string | null): string {
  if (iso === null) return 'an unknown time';
  return `${iso.slice(0, 19).replace('T', ' ')} UTC`;
}

/** `4 min 12 s`, `2 h 3 min`, `1 d 2 h` */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${String(s)} s`;
  if (s < 3600) return `${String(Math.floor(s / 60))} min${s % 60 ? ` ${String(s % 60)} s` : ''}`;
  if (s < 86_400) {
    const minutes = Math.floor((s % 3600) / 60);
    return `${String(Math.floor(s / 3600))} h${minutes ? ` ${String(minutes)} min` : ''}`;
  }
  const hours = Math.floor((s % 86_400) / 3600);
  return `${String(Math.floor(s / 86_400))} d${hours ? ` ${String(hours)} h` : ''}`;
}

const plural = (n: number, one: string, many: string): string => `${String(n)} ${n === 1 ? one : many}`;

/** Lines beyond this are summed up ("… and 180 more"): a chat message stays readable at any scale. */
const MAX_LINES = 50;

function lines(all: string[]): string {
  if (all.length <= MAX_LINES) return all.join('\n');
  return [...all.slice(0, MAX_LINES), `… and ${String(all.length - MAX_LINES)} more`].join('\n');
}

export function buildPayload(
  origin: Origin,
  type: NotificationType,
  severity: NotificationSeverity,
  title: string,
  text: string,
  items: NotificationItem[],
): NotificationPayload {
  return {
    version: 1,
    id: randomUUID(),
    type,
    event: notificationEventOf[type],
    severity,
    at: origin.now.toISOString(),
    gateway: origin.gateway,
    title,
    text,
    consoleUrl: origin.consoleUrl,
    items,
  };
}

export const item = (
  fields: Partial<NotificationItem> & Pick<NotificationItem, 'subject' | 'name'>,
): NotificationItem => ({
  id: null,
  node: null,
  since: null,
  durationSeconds: null,
  detail: null,
  ...fields,
});

/** A service as a message names it: `web (node pi-1)`. */
function serviceLine(entry: NotificationItem): string {
  return `${entry.name}${entry.node ? ` (node ${entry.node.name})` : ''}`;
}

export interface NodeTotals {
  /** Checked services per node (UDP is not checked): "all of node X's services are down". */
  checkedByNode: ReadonlyMap<number, number>;
}

/** Services that went down together, grouped by node: one message however many (a node dies: one message). */
export function backendsDown(origin: Origin, items: NotificationItem[], totals: NodeTotals): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `${first.name} is down${first.node ? ` (node ${first.node.name})` : ''}`
      : `${plural(items.length, 'service is', 'services are')} down`;
  const byNode = new Map<string, NotificationItem[]>();
  for (const entry of items) {
    const key = entry.node?.name ?? '';
    byNode.set(key, [...(byNode.get(key) ?? []), entry]);
  }
  const text: string[] = [];
  for (const [nodeName, group] of byNode) {
    const nodeId = group[0]?.node?.id;
    const checked = nodeId === undefined ? undefined : totals.checkedByNode.get(nodeId);
    if (nodeName && checked !== undefined && checked > 1 && group.length >= checked)
      text.push(
        `All ${String(checked)} checked services of node ${nodeName} are down: its tunnel or the machine may be down.`,
      );
  }
  for (const entry of items)
    text.push(
      `- ${serviceLine(entry)}: down since ${formatTime(entry.since)}${entry.detail ? `: ${entry.detail}` : ''}`,
    );
  return buildPayload(origin, 'backend.down', 'critical', title, lines(text), items);
}

export function backendsUp(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `${first.name} is up again after ${formatDuration(first.durationSeconds ?? 0)}`
      : `${plural(items.length, 'service is', 'services are')} up again`;
  const text = items.map(
    (entry) =>
      `- ${serviceLine(entry)}: up again after ${formatDuration(entry.durationSeconds ?? 0)} (down since ${formatTime(entry.since)})`,
  );
  return buildPayload(origin, 'backend.up', 'resolved', title, lines(text), items);
}

export function nodesOffline(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `Node ${first.name} is offline`
      : `${plural(items.length, 'node is', 'nodes are')} offline`;
  const text = items.map((entry) => `- ${entry.name}: no WireGuard handshake since ${formatTime(entry.since)}`);
  return buildPayload(origin, 'node.offline', 'critical', title, lines(text), items);
}

export function nodesOnline(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `Node ${first.name} is online again after ${formatDuration(first.durationSeconds ?? 0)}`
      : `${plural(items.length, 'node is', 'nodes are')} online again`;
  const text = items.map(
    (entry) => `- ${entry.name}: online again after ${formatDuration(entry.durationSeconds ?? 0)}`,
  );
  return buildPayload(origin, 'node.online', 'resolved', title, lines(text), items);
}

export function gatewaysGone(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const names = items.map((entry) => entry.name).join(', ');
  const title = items.length === 1 ? `Gateway ${names} is gone` : `${String(items.length)} gateways are gone: ${names}`;
  const text = items.map(
    (entry) =>
      `- ${entry.name}: no heartbeat since ${formatTime(entry.since)}; nodes use the other gateways, its run-once jobs move to another`,
  );
  return buildPayload(origin, 'gateway.gone', 'critical', title, lines(text), items);
}

export function gatewaysBack(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const names = items.map((entry) => entry.name).join(', ');
  const title = items.length === 1 ? `Gateway ${names} is back` : `${String(items.length)} gateways are back: ${names}`;
  const text = items.map((entry) => `- ${entry.name}: back after ${formatDuration(entry.durationSeconds ?? 0)}`);
  return buildPayload(origin, 'gateway.back', 'resolved', title, lines(text), items);
}

export function certificatesFailed(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `Certificate renewal failed for ${first.name}`
      : `Certificate renewal failed for ${String(items.length)} domains`;
  const text = items.map((entry) => `- ${entry.name}: ${entry.detail ?? 'failed'}`);
  return buildPayload(origin, 'certificate.failed', 'critical', title, lines(text), items);
}

export function certificatesExpiring(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const days = (entry: NotificationItem): number =>
    Math.max(0, Math.floor((Date.parse(entry.since ?? '') - origin.now.getTime()) / 86_400_000));
  const title =
    items.length === 1 && first
      ? `The certificate of ${first.name} expires in ${plural(days(first), 'day', 'days')}`
      : `${String(items.length)} certificates expire soon`;
  const text = items.map(
    (entry) =>
      `- ${entry.name}: expires ${formatTime(entry.since)} (${plural(days(entry), 'day', 'days')} left)${entry.detail ? `; ${entry.detail}` : ''}`,
  );
  return buildPayload(origin, 'certificate.expiring', 'warning', title, lines(text), items);
}

export function driftFound(origin: Origin, differences: string[], repaired: boolean): NotificationPayload {
  const title = repaired
    ? `Drift found on gateway ${origin.gateway} and repaired`
    : `Drift found on gateway ${origin.gateway}: not repaired`;
  const text = [
    `What nginx or WireGuard served differed from the database (${plural(differences.length, 'difference', 'differences')}):`,
    ...differences.map((difference) => `- ${difference}`),
  ];
  return buildPayload(
    origin,
    'drift.found',
    repaired ? 'warning' : 'critical',
    title,
    lines(text),
    differences.slice(0, MAX_LINES).map((difference) => item({ subject: 'change', name: difference })),
  );
}

export function changesSetAside(origin: Origin, items: NotificationItem[]): NotificationPayload {
  const [first] = items;
  const title =
    items.length === 1 && first
      ? `A change was set aside: ${first.name}`
      : `${String(items.length)} changes were set aside`;
  const text = items.map((entry) => `- ${serviceLine(entry)}: ${entry.detail ?? ''}`);
  return buildPayload(
    origin,
    'change.set-aside',
    'warning',
    title,
    lines(['The gateway saved these changes but does not serve them:', ...text]),
    items,
  );
}

export function newSignInAddress(
  origin: Origin,
  username: string,
  address: string,
  detail: string | null,
): NotificationPayload {
  return buildPayload(
    origin,
    'auth.new-address',
    'warning',
    `${username} signed in from a new address: ${address}`,
    `${username} signed in to the console from ${address}${detail ? ` (${detail})` : ''}, an address not seen signing in to this account before. If this was not you, change the password now (Settings) and check the audit log.`,
    [item({ subject: 'account', name: username, detail: address })],
  );
}

export function twoFactorDisabled(origin: Origin, username: string, address: string | null): NotificationPayload {
  return buildPayload(
    origin,
    'auth.two-factor-disabled',
    'warning',
    `${username} turned two-factor sign-in off`,
    `Two-factor sign-in of ${username} was turned off${address ? ` from ${address}` : ''}. If this was not you, change the password and turn it on again (Settings).`,
    [item({ subject: 'account', name: username, detail: address })],
  );
}

export function testMessage(origin: Origin, channelName: string): NotificationPayload {
  return buildPayload(
    origin,
    'test',
    'info',
    `Test message from Postern (${channelName})`,
    `This is a test of the notification channel ${channelName}, sent by gateway ${origin.gateway} at ${formatTime(origin.now.toISOString())}. If you can read it, the channel works.`,
    [],
  );
}
