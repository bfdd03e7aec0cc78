import { readFile } from 'node:fs/promises';
import type { FileOwner } from './atomic-write.js';

/** uid/gid of a local user from /etc/passwd, or null when it does not exist (no `id` subprocess needed). */
export async function lookupUser(name: string): Promise<FileOwner | null> {
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return null;
}
