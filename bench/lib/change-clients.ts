import { createApiClient } from '@postern/contract';
import { ChangeSequence } from './change-sequence.js';

// The clients of propagation.ts's "clients at once" measure, in a process of their own (forked by
// lib/change-clients-child.ts), so the gateway's CPU figure is the gateway's alone. Each client runs its own change
// sequence as fast as the API answers it, over keep-alive connections (Node's fetch pools them per origin). Only
// ever talks to 127.0.0.1.

export interface ClientsRun {
  cmd: 'run';
  baseUrl: string;
  token: string;
  nodeId: number;
  clients: number;
  perClient: number;
  /** Client i's sequence starts at offset + i × 10,000 (ChangeSequence paths /c<n>). */
  offset: number;
}

export type ClientsReply =
  { cmd: 'run'; ok: true; seconds: number; cpuSeconds: number } | { cmd: 'run'; ok: false; error: string };

async function run(command: ClientsRun): Promise<ClientsReply> {
  if (new URL(command.baseUrl).hostname !== '127.0.0.1') throw new Error('the benchmark only talks to 127.0.0.1');
  const api = createApiClient({ baseUrl: command.baseUrl, token: command.token });
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: command.clients }, async (_, i) => {
      const target = { api, nodeId: command.nodeId, ids: new Map<string, number>() };
      for (const change of new ChangeSequence(command.perClient, command.offset + i * 10_000).changes)
        await change(target);
    }),
  );
  const used = process.cpuUsage(cpu);
  return {
    cmd: 'run',
    ok: true,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

process.on('message', (message: ClientsRun | { cmd: 'exit' }) => {
  if (message.cmd === 'exit') process.exit(0);
  run(message).then(
    (reply) => process.send?.(reply),
    (error: unknown) => process.send?.({ cmd: 'run', ok: false, error: String(error) } satisfies ClientsReply),
  );
});
