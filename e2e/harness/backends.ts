import { fileURLToPath } from 'node:url';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';

// Starts the tiny HTTP / TCP-echo / UDP-echo backends of programs/echo-server.mjs inside a namespace.
// Their answers carry `label`, e.g. "node1", so a test can tell which backend answered.

const ECHO_SERVER = fileURLToPath(new URL('./programs/echo-server.mjs', import.meta.url));

export type BackendKind = 'http' | 'tcp' | 'udp';

export async function startBackend(
  lab: Lab,
  ns: string,
  kind: BackendKind,
  host: string,
  port: number,
  label: string,
): Promise<ManagedProcess> {
  const child = lab.spawn(ns, `${kind} backend ${label} ${host}:${port}`, process.execPath, [
    ECHO_SERVER,
    kind,
    host,
    String(port),
    label,
  ]);
  await child.waitForOutput(/^listening /m, 10_000);
  return child;
}
