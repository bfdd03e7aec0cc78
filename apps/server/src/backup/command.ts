import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../env.js';
import { createBackup, restoreBackup, RestoreRefusedError } from './archive.js';

// `node dist/main.js backup <file|->` and `restore <file|->`: the same entry point as the gateway, so every
// install has them where the gateway is (bare metal, `docker exec`, `kubectl exec`). The data dir is the
// gateway's own (POSTERN_DATA_DIR) unless --data-dir names another.

const USAGE = [
  'usage: main.js backup  [--data-dir DIR] FILE   back up a running or stopped gateway into FILE (tar.gz; - for stdout)',
  '       main.js restore [--data-dir DIR] FILE   restore FILE (- for stdin) into an empty data directory',
].join('\n');

export const isBackupCommand = (command: string | undefined): command is 'backup' | 'restore' =>
  command === 'backup' || command === 'restore';

export async function runBackupCommand(command: 'backup' | 'restore', argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { 'data-dir': { type: 'string' }, help: { type: 'boolean' } },
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
    return 2;
  }
  const [file, ...extra] = parsed.positionals;
  if (parsed.values.help || file === undefined || extra.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return parsed.values.help ? 0 : 2;
  }
  const dataDir = resolve(parsed.values['data-dir'] ?? loadConfig().dataDir);
  try {
    if (command === 'backup') {
      await createBackup(dataDir, file);
      if (file !== '-') process.stderr.write(`backed up ${dataDir} to ${resolve(file)}\n`);
    } else {
      const manifest = await restoreBackup(file, dataDir);
      process.stderr.write(`restored the backup of ${manifest.createdAt} into ${dataDir}; start the gateway on it\n`);
    }
    return 0;
  } catch (error) {
    const reason =
      error instanceof RestoreRefusedError ? error.message : error instanceof Error ? error.message : String(error);
    process.stderr.write(`${command} failed: ${reason}\n`);
    return 1;
  }
}
