import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

// The Lua module's own unit tests (lua-spec/*_spec.lua) run by busted under Lua 5.1, LuaJIT's dialect (Debian's
// lua-busted and lua5.1, installed by scripts/install-deps.sh --all): each busted test is one test here, so the test
// command counts them. busted missing is a failure, never a skip.

interface BustedResult {
  name: string;
  message?: string;
  trace?: { message?: string; traceback?: string };
}
interface BustedReport {
  successes: BustedResult[];
  failures: BustedResult[];
  errors: BustedResult[];
  pendings: BustedResult[];
}

const specDir = join(dirname(fileURLToPath(import.meta.url)), 'lua-spec');
const run = spawnSync('busted', ['--lua=lua5.1', '--output=json', '.'], { cwd: specDir, encoding: 'utf8' });

function report(): BustedReport | string {
  if (run.error) return `busted did not run (scripts/install-deps.sh --all installs lua-busted): ${run.error.message}`;
  try {
    return JSON.parse(run.stdout) as BustedReport;
  } catch {
    return `busted gave no report: ${run.stderr || run.stdout}`;
  }
}

const outcome = report();

describe('postern.lua (busted)', () => {
  if (typeof outcome === 'string') {
    it('runs busted', () => {
      throw new Error(outcome);
    });
    return;
  }
  for (const test of outcome.successes) it(test.name, () => undefined);
  for (const test of [...outcome.failures, ...outcome.errors]) {
    it(test.name, () => {
      throw new Error(`${test.message ?? ''}\n${test.trace?.traceback ?? ''}`);
    });
  }
  for (const test of outcome.pendings) it.skip(test.name, () => undefined);
});
