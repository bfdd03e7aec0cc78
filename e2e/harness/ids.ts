import { randomBytes } from 'node:crypto';

// Names of everything a run creates (namespaces, interfaces, WireGuard sockets) start with the run id, so a
// sweep by prefix removes exactly what this run made and nothing of anyone else's. globalSetup sets the id
// once so every test file (each in its own process) shares it.

export const RUN_ID_ENV = 'POSTERN_E2E_RUN_ID';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomName(length: number): string {
  return [...randomBytes(length)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
}

/** "pt" + 4 characters; interface names (15 characters at most) keep 9 characters for the lab and role. */
export function newRunId(): string {
  return `pt${randomName(4)}`;
}

let fallbackRunId: string | undefined;

export function currentRunId(): string {
  const fromEnv = process.env[RUN_ID_ENV];
  if (fromEnv !== undefined && /^pt[a-z0-9]{4}$/.test(fromEnv)) return fromEnv;
  fallbackRunId ??= newRunId();
  return fallbackRunId;
}

/** A lab's id: the run id plus 2 characters, 8 characters in all. */
export function newLabId(): string {
  return `${currentRunId()}${randomName(2)}`;
}
