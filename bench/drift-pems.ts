// The drift check's look at the PEMs on disk: every file read and hashed (before) against PemDigests (after: a file
// unchanged since the last check is a stat). Usage: tsx drift-pems.ts <dir of PEMs> [rounds]
// (e.g. a BENCH_CERT_CACHE dir of apply.ts: 100,000 PEMs). Prints wall and CPU per pass, rounds interleaved.
import { readdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { readPemText } from '@postern/server/src/dataplane/certs/pem-files.js';
import { pemPath } from '@postern/server/src/dataplane/certs/self-signed.js';
import { md5 } from '@postern/server/src/dataplane/proxy/held.js';
import { PemDigests } from '@postern/server/src/dataplane/proxy/pem-digests.js';
import { percentile, printTable } from './lib/stats.js';

const dir = process.argv[2];
const rounds = Number(process.argv[3] ?? 3);
if (!dir) throw new Error('usage: tsx drift-pems.ts <dir of PEMs> [rounds]');

/** Before: every PEM read and hashed, 32 files at a time (proxy/certificates.ts readPems, as drift.ts used it). */
async function readAll(names: readonly string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < names.length; i = next++) {
      const pem = await readPemText(pemPath(dir as string, names[i] as string));
      if (pem !== null) md5(pem);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

/** Wall, CPU and the worst gap of a 1 ms interval timer (how long the pass held the event loop at once). */
async function timed(work: () => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number; gapMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 1);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  clearInterval(timer);
  return { wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000, gapMs };
}

const names = (await readdir(dir)).filter((f) => f.endsWith('.pem')).map((f) => f.slice(0, -4));
console.log(
  `${names.length} PEMs in ${dir}; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
const results: Record<string, { wallMs: number; cpuMs: number; gapMs: number }[]> = {
  before: [],
  'after, first check': [],
  after: [],
};
let reads = 0;
const counted = (path: string): Promise<string | null> => {
  reads++;
  return readPemText(path);
};
for (let round = 0; round < rounds; round++) {
  results.before?.push(await timed(() => readAll(names)));
  const digests = new PemDigests(counted);
  reads = 0;
  results['after, first check']?.push(await timed(() => digests.of(dir, names)));
  const firstReads = reads;
  reads = 0;
  results.after?.push(await timed(() => digests.of(dir, names)));
  console.log(`round ${round + 1}: files read by the first check ${firstReads}, by the next ${reads}`);
}
const before = percentile(results.before?.map((r) => r.cpuMs) ?? [], 50);
printTable(
  ['pass', 'wall p50', 'CPU p50', 'CPU / before', 'worst timer gap'],
  Object.entries(results).map(([pass, runs]) => {
    const wall = percentile(
      runs.map((r) => r.wallMs),
      50,
    );
    const cpu = percentile(
      runs.map((r) => r.cpuMs),
      50,
    );
    const gaps = runs.map((r) => r.gapMs.toFixed(0)).join(' / ');
    return [pass, `${wall.toFixed(0)} ms`, `${cpu.toFixed(0)} ms`, `${(cpu / before).toFixed(2)}x`, `${gaps} ms`];
  }),
);
console.log(
  `load average at the end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
