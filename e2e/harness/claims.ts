import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.js';

// Address ranges routed in the test process's namespace (the management links, the ACME network) are picked at
// random among those not routed yet. Two test files starting at once (the test command runs two lanes side by side;
// other checkouts run their own) could both see a range free before either routes it: a claim file, created
// exclusively, settles who has it. A claim names its process; one whose process is gone is taken over.

const CLAIMS_DIR = '/run/postern-e2e-claims';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Claims `name` for this process; false if a live process holds it. */
function tryClaim(name: string): boolean {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  const path = join(CLAIMS_DIR, name);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(path, 'utf8'));
    } catch {
      // Released meanwhile: try again.
    }
    // A claim being written has no pid yet: it is someone's.
    if (Number.isNaN(holder) || holder === 0 || isAlive(holder)) return false;
    rmSync(path, { force: true });
  }
  return false;
}

export interface Claim {
  /** The range's candidate value that was picked. */
  value: string;
  release: () => void;
}

/**
 * Picks one of `candidate()`'s values that `isRouted` says is free in `ip -4 route show table all` and that no
 * other test process has claimed, and claims it (`kind` separates the kinds of ranges). Release it when done.
 */
export async function claimFreeRange(
  kind: string,
  candidate: () => string,
  isRouted: (routes: string, value: string) => boolean,
): Promise<Claim> {
  const routes = await run('ip', ['-4', 'route', 'show', 'table', 'all']);
  for (let attempt = 0; attempt < 50; attempt++) {
    const value = candidate();
    if (isRouted(routes, value)) continue;
    const name = `${kind}-${value}`;
    if (!tryClaim(name)) continue;
    return {
      value,
      release: () => {
        try {
          if (Number(readFileSync(join(CLAIMS_DIR, name), 'utf8')) === process.pid)
            rmSync(join(CLAIMS_DIR, name), { force: true });
        } catch {
          // Already released.
        }
      },
    };
  }
  throw new Error(`no free ${kind} range for the test network`);
}
