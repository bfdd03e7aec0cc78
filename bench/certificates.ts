// What a new domain's self-signed certificate costs (bench/README.md "certificates.ts"): the in-process maker the
// gateway uses (createSelfSignedPem) against the `openssl req -x509` process it replaced, interleaved in one run so
// background load hits both alike. Prints p50/p99 of each and the ratio (in-process / openssl). Target: in-process
// p99 well under 10 ms. No root, no network; needs openssl on PATH for the baseline only.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSelfSignedPem } from '@postern/server/src/dataplane/certs/self-signed.js';
import { percentile, printTable } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 200);
const run = promisify(execFile);

/** The replaced path, as the gateway ran it: one openssl process per name, the key through a private temp dir. */
async function opensslSelfSigned(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'postern-bench-cert-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '825',
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=DNS:${name}`,
    ]);
    return `${await readFile(keyFile, 'utf8')}${await readFile(certFile, 'utf8')}`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function timed(make: (name: string) => Promise<string>, name: string): Promise<number> {
  const start = performance.now();
  await make(name);
  return performance.now() - start;
}

const inProcess: number[] = [];
const openssl: number[] = [];
/** This process's CPU time spent in the in-process maker (the openssl children's is not counted here). */
let inProcessCpuUs = 0;
// Warm-up: the first call loads the library and WebCrypto's curve tables.
await createSelfSignedPem('warm.example.test');
await opensslSelfSigned('warm.example.test');
for (let i = 0; i < ROUNDS; i++) {
  const name = `d${i}.example.test`;
  const cpu = process.cpuUsage();
  inProcess.push(await timed(createSelfSignedPem, name));
  const used = process.cpuUsage(cpu);
  inProcessCpuUs += used.user + used.system;
  openssl.push(await timed(opensslSelfSigned, name));
}

console.log(
  `in-process CPU time per certificate: ${(inProcessCpuUs / ROUNDS / 1000).toFixed(2)} ms ` +
    '(wall time above includes waiting for a CPU on a loaded machine)',
);
const row = (label: string, values: number[]): string[] => [
  label,
  percentile(values, 50).toFixed(2),
  percentile(values, 99).toFixed(2),
];
console.log(`load average ${(loadavg()[0] ?? 0).toFixed(2)}, ${ROUNDS} certificates each, interleaved`);
printTable(['maker', 'p50 ms', 'p99 ms'], [row('in-process', inProcess), row('openssl process', openssl)]);
console.log(
  `in-process / openssl: p50 ${(percentile(inProcess, 50) / percentile(openssl, 50)).toFixed(3)}x, ` +
    `p99 ${(percentile(inProcess, 99) / percentile(openssl, 99)).toFixed(3)}x (target: in-process p99 well under 10 ms)`,
);
