import { fork } from 'node:child_process';
import type { ClientCommand, ClientReply } from './api-client-protocol.js';

// The parent's side of the load-generator child (lib/api-load-client.ts): one command at a time, each answered
// by a reply with the same `cmd`.

export interface LoadChild {
  ask<T extends ClientReply>(command: ClientCommand): Promise<T>;
  stop(): void;
}

export function startLoadChild(): LoadChild {
  const child = fork(new URL('./api-load-client.ts', import.meta.url), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return {
    ask<T extends ClientReply>(command: ClientCommand): Promise<T> {
      return new Promise((resolve, reject) => {
        const onMessage = (reply: ClientReply): void => {
          if (reply.cmd !== command.cmd) return;
          child.off('message', onMessage);
          child.off('exit', onExit);
          resolve(reply as T);
        };
        const onExit = (code: number | null): void =>
          reject(new Error(`load client exited (${String(code)}) during ${command.cmd}`));
        child.on('message', onMessage);
        child.once('exit', onExit);
        child.send(command);
      });
    },
    stop() {
      if (child.connected) child.send({ cmd: 'exit' } satisfies ClientCommand);
    },
  };
}
