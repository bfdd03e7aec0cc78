import { hash, verify } from '@node-rs/argon2';

// argon2id with the library's defaults (19 MiB, 2 passes: OWASP's minimum recommendation).

const ARGON2ID = 2; // @node-rs/argon2 Algorithm.Argon2id; a const enum, which isolatedModules cannot import.

// eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the enum's value, as said above
export const hashPassword = (password: string): Promise<string> => hash(password, { algorithm: ARGON2ID });

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/** Spends the same time as a real check, so an unknown username cannot be told apart by timing. */
export async function verifyDummyPassword(password: string): Promise<void> {
  dummyHash ??= hashPassword('postern-dummy-password-for-timing');
  await verifyPassword(await dummyHash, password);
}
