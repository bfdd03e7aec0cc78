import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../harness/ports.js';
import { waitFor } from '../../apps/server/src/test/wait-for.js';

export const repoRoot = resolve(import.meta.dirname, '../..');
export const ADMIN = { username: 'admin', password: 'browser-test-password-1' };

export interface RunningServer {
  baseUrl: string;
  dataDir: string;
  /** Output of the server process so far (for failure messages). */
  output: () => string;
  stop: () => Promise<void>;
  /** Stops the process, runs `whileDown`, and starts it again on the same port and data directory. */
  restart: (whileDown?: () => Promise<void>) => Promise<void>;
}

/**
 * Starts the built gateway (apps/server/dist/main.js) on a free loopback port with its own data directory.
 * The data plane is off: browser tests check the console against the real API and database; the data plane has
 * its own system tests in e2e/system.
 */
export async function startServer(extraEnv: Readonly<Record<string, string>> = {}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'postern-browser-'));
  // A node client of its own (stand-in files), so the console offers the one-line install whether or not this
  // checkout built the real one (scripts/build-node-client.sh).
  const nodeClientDir = join(dataDir, 'node-client');
  mkdirSync(nodeClientDir);
  writeFileSync(join(nodeClientDir, 'install.sh'), '#!/bin/sh\n');
  writeFileSync(join(nodeClientDir, 'SHA256SUMS'), '');
  const port = await freePort();
  let process_ = await spawnServer(dataDir, port, extraEnv);
  let earlierOutput = '';
  return {
    baseUrl: process_.baseUrl,
    dataDir,
    output: () => earlierOutput + process_.output(),
    stop: async () => {
      await process_.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    restart: async (whileDown) => {
      await process_.stop();
      earlierOutput += process_.output();
      await whileDown?.();
      process_ = await spawnServer(dataDir, port, extraEnv);
    },
  };
}

/** One server process on `port` with `dataDir` (kept when it stops, so a restart finds the same database). */
async function spawnServer(
  dataDir: string,
  port: number,
  extraEnv: Readonly<Record<string, string>>,
): Promise<{ baseUrl: string; output(): string; stop(): Promise<void> }> {
  let log = '';
  const child: ChildProcess = spawn(process.execPath, [join(repoRoot, 'apps/server/dist/main.js')], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      POSTERN_DATA_DIR: dataDir,
      POSTERN_HOST: '127.0.0.1',
      POSTERN_PORT: String(port),
      POSTERN_PUBLIC_HOST: 'gateway.test',
      POSTERN_ADMIN_USERNAME: ADMIN.username,
      POSTERN_ADMIN_PASSWORD: ADMIN.password,
      POSTERN_DATAPLANE: 'off',
      POSTERN_LOG_LEVEL: 'warn',
      POSTERN_NODE_CLIENT_DIR: join(dataDir, 'node-client'),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    await waitFor(async () => (await fetch(`${baseUrl}/api/health`)).ok, {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: `server health (${log})`,
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    baseUrl,
    output: () => log,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Signs in through the API (for seeding data); the UI sign-in is tested separately. */
export async function apiLogin(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  if (!response.ok) throw new Error(`login failed: ${response.status}`);
  return ((await response.json()) as { token: string }).token;
}

export async function api<T>(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
