import { randomBytes } from 'node:crypto';
import { open, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/** withSecretFile's names (removeLeftoverSecrets looks for them). */
const SECRET_FILE = /^\.[0-9a-f]{16}\.secret$/;

/**
 * `use(path)` with `secret` in a file of its own in `dir` (the gateway's private 0700 state directory), removed
 * afterwards whatever `use` did. For a key `wg` must read from a path: it cannot read Node's stdin or an extra stdio
 * fd (`/dev/stdin`, `/dev/fd/3`: Node's child pipes are sockets, which fopen refuses with ENXIO), and argv is
 * world-readable in /proc. The file is created exclusively (O_CREAT|O_EXCL: never someone's file or link put there
 * before) with mode 0600 from its first moment, so no other user can read it even for an instant. Nothing is
 * fsynced: the file only carries the key to one process and is gone before the change is answered; a crash leaves
 * at most a 0600 file in that directory, which removeLeftoverSecrets takes at the next start.
 */
export async function withSecretFile<T>(dir: string, secret: string, use: (path: string) => Promise<T>): Promise<T> {
  const path = join(dir, `.${randomBytes(8).toString('hex')}.secret`);
  const handle = await open(path, 'wx', 0o600);
  try {
    try {
      await handle.writeFile(`${secret}\n`);
    } finally {
      await handle.close();
    }
    return await use(path);
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * Removes what a crash between withSecretFile's create and its removal left in `dir`, and `also` (the older driver's
 * fixed-name key file, left when `wg` failed). For the start of the directory's only user, before any use.
 */
export async function removeLeftoverSecrets(dir: string, also: readonly string[] = []): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((name) => SECRET_FILE.test(name) || also.includes(name)))
    await rm(join(dir, name), { force: true });
}
