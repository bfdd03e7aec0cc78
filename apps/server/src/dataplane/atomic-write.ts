import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface FileOwner {
  uid: number;
  gid: number;
}

// Every config or key file is written as temp file + fsync + rename, so a crash at any moment leaves either the
// old or the new file, never half of one. The temp file is created exclusively with its final mode, so secret
// material is never readable by others, not even for an instant. Content given as pieces (a lazy iterable) is written
// piece by piece, so making a large file never holds the event loop for long.
export async function writeFileAtomic(
  path: string,
  content: string | Buffer | Iterable<string>,
  mode = 0o644,
  owner?: FileOwner,
): Promise<void> {
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    if (owner) await handle.chown(owner.uid, owner.gid);
    if (typeof content === 'string' || Buffer.isBuffer(content)) await handle.writeFile(content);
    else for (const piece of content) await handle.write(piece);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  await rename(temp, path);
  await syncDir(dirname(path));
}

/** fsync a directory so a rename in it survives a power loss. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Temp file + rename, synchronously and with no fsync: for a file that can always be made again (a self-signed PEM,
 * a PEM loaded from the shared store), written on a change's path. The rename is atomic, so a reader sees the old
 * file or the new one; a power cut before the kernel wrote it back may leave the name missing, empty or the old file,
 * which the boot finds (the push compares each file's fingerprint with the recorded one) and makes again
 * (dataplane/README.md "A new domain's certificate"). Synchronous: ~0.1 ms of the event loop, where each of the async
 * calls' four trips through libuv's 4-thread pool waited behind a boot's or a drift check's file reads, and the two
 * fsyncs cost 42-98 ms (bench/README.md).
 */
export function replaceFileSync(path: string, content: string, mode: number): void {
  const temp = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // Created exclusively with its final mode: the key is never readable by others, not even for an instant.
    writeFileSync(temp, content, { mode, flag: 'wx' });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
