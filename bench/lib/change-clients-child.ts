import { fork } from 'node:child_process';
import type { ClientsReply, ClientsRun } from './change-clients.js';

/** Runs `command`'s clients in a child process (lib/change-clients.ts) and resolves with its reply. */
export async function runClientsInChild(command: Omit<ClientsRun, 'cmd'>): Promise<ClientsReply & { ok: true }> {
  const child = fork(new URL('./change-clients.ts', import.meta.url), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const reply = await new Promise<ClientsReply>((resolve, reject) => {
      child.once('message', (message: ClientsReply) => resolve(message));
      child.once('exit', (code) => reject(new Error(`the clients' process exited (${String(code)})`)));
      child.send({ cmd: 'run', ...command } satisfies ClientsRun);
    });
    if (!reply.ok) throw new Error(`the clients' process: ${reply.error}`);
    return reply;
  } finally {
    if (child.connected) child.send({ cmd: 'exit' });
  }
}
