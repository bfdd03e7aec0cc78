import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSystem } from './system.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'postern-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('createSystem', () => {
  it('creates the config directory with mode 0700, also when it already existed wider', async () => {
    const system = createSystem('/usr/bin');
    const configDir = path.join(dir, 'etc', 'postern');
    await system.ensurePrivateDir(configDir);
    expect(await modeOf(configDir)).toBe(0o700);
    await chmod(configDir, 0o755);
    await system.ensurePrivateDir(configDir);
    expect(await modeOf(configDir)).toBe(0o700);
  });

  it('writes files with mode 0600 and replaces a world-readable file instead of inheriting its mode', async () => {
    const system = createSystem('/usr/bin');
    const file = path.join(dir, 'wireguard.conf');
    await writeFile(file, 'old', { mode: 0o644 });
    await system.writePrivateFile(file, 'PrivateKey = secret\n');
    expect(await modeOf(file)).toBe(0o600);
    expect(await system.readText(file)).toBe('PrivateKey = secret\n');
    expect(await system.readText(path.join(dir, 'missing'))).toBeNull();
  });

  it('finds programs only on the PATH it was given', async () => {
    const bin = path.join(dir, 'bin');
    await createSystem('').ensurePrivateDir(bin);
    await writeFile(path.join(bin, 'wg'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(bin, 'ip'), 'not executable', { mode: 0o644 });
    const system = createSystem(`${path.join(dir, 'nothing')}:${bin}`);
    expect(await system.which('wg')).toBe(path.join(bin, 'wg'));
    expect(await system.which('ip')).toBeNull();
    expect(await createSystem(path.join(dir, 'nothing')).which('wg')).toBeNull();
  });

  it('runs a program with an argv array (no shell) and reports its exit code', async () => {
    const system = createSystem('/usr/bin:/bin');
    const echo = await system.which('echo');
    const cat = await system.which('cat');
    expect(echo).not.toBeNull();
    expect(await system.run(echo ?? 'echo', ['a b; $(reboot)'])).toEqual({
      code: 0,
      stdout: 'a b; $(reboot)\n',
      stderr: '',
    });
    const result = await system.run(cat ?? 'cat', [path.join(dir, 'missing')]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('No such file');
  });
});
