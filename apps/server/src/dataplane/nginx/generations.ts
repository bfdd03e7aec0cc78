import { mkdir, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir, writeFileAtomic } from '../atomic-write.js';
import type { ConfigFiles } from '../types.js';

// Config generations under the nginx prefix: `gen/<n>/` holds one complete config, `current` is a symlink to
// the generation nginx serves. A generation is written under a temp name and renamed into place, and the
// symlink is replaced by rename, so a crash never leaves nginx pointed at a half-written config.

const GEN_DIR = 'gen';
export const CURRENT_LINK = 'current';

export function generationDir(prefixDir: string, generation: number): string {
  return join(prefixDir, GEN_DIR, String(generation));
}

export async function listGenerations(prefixDir: string): Promise<number[]> {
  const names = await readdir(join(prefixDir, GEN_DIR)).catch(() => []);
  return names
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .sort((a, b) => a - b);
}

export async function writeGeneration(prefixDir: string, generation: number, files: ConfigFiles): Promise<string> {
  const parent = join(prefixDir, GEN_DIR);
  const temp = join(parent, `.${generation}.tmp`);
  await rm(temp, { recursive: true, force: true });
  await mkdir(temp, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) throw new Error(`invalid config file name ${JSON.stringify(name)}`);
    await writeFileAtomic(join(temp, name), content);
  }
  const dir = generationDir(prefixDir, generation);
  await rm(dir, { recursive: true, force: true });
  await rename(temp, dir);
  await syncDir(parent);
  return dir;
}

export async function readCurrentGeneration(prefixDir: string): Promise<number | null> {
  const target = await readlink(join(prefixDir, CURRENT_LINK)).catch(() => null);
  const match = target === null ? null : /(\d+)$/.exec(target);
  return match?.[1] === undefined ? null : Number(match[1]);
}

export async function switchCurrent(prefixDir: string, generation: number): Promise<void> {
  const temp = join(prefixDir, `.${CURRENT_LINK}.tmp`);
  await rm(temp, { force: true });
  await symlink(join(GEN_DIR, String(generation)), temp);
  await rename(temp, join(prefixDir, CURRENT_LINK));
  await syncDir(prefixDir);
}

/** Keep the newest `keep` generations plus the ones in use. */
export async function pruneGenerations(prefixDir: string, keep: number, inUse: (number | null)[]): Promise<void> {
  const all = await listGenerations(prefixDir);
  const stale = all.slice(0, Math.max(0, all.length - keep)).filter((g) => !inUse.includes(g));
  for (const generation of stale) await rm(generationDir(prefixDir, generation), { recursive: true, force: true });
}
