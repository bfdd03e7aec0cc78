import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeConfigText } from './fixtures.js';
import { readSettings, readWireguardConfig, saveConnection, settingsPath, wireguardPath } from './store.js';
import { createSystem } from './system.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'postern-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('store', () => {
  it('keeps URL, token and WireGuard config in 0600 files inside a 0700 directory', async () => {
    const system = createSystem('/usr/bin');
    const configDir = path.join(dir, 'postern');
    const settings = { url: 'https://gw.example.com', token: 'pstn_secret', interface: 'postern0' };
    await saveConnection(system, configDir, settings, nodeConfigText());
    expect((await stat(configDir)).mode & 0o777).toBe(0o700);
    expect((await stat(settingsPath(configDir))).mode & 0o777).toBe(0o600);
    expect((await stat(wireguardPath(configDir))).mode & 0o777).toBe(0o600);
    expect(await readSettings(system, configDir)).toEqual(settings);
    expect(await readWireguardConfig(system, configDir)).toBe(nodeConfigText());
  });

  it('keeps the pin, the plain-HTTP permission and the health URL, and reads files from before them', async () => {
    const system = createSystem('/usr/bin');
    const settings = {
      url: 'https://gw.example.com',
      token: 'pstn_secret',
      interface: 'postern0',
      pin: 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
      insecure: true as const,
      tunnelHealthUrl: 'http://10.44.0.1:80/_postern/tunnel-health',
    };
    await saveConnection(system, dir, settings, nodeConfigText());
    expect(await readSettings(system, dir)).toEqual(settings);
    await writeFile(
      settingsPath(dir),
      JSON.stringify({ url: 'https://gw.example.com', token: 'pstn_secret', interface: 'postern0' }),
    );
    expect(await readSettings(system, dir)).toEqual({
      url: 'https://gw.example.com',
      token: 'pstn_secret',
      interface: 'postern0',
    });
    await writeFile(settingsPath(dir), JSON.stringify({ ...settings, pin: 'sha256:short' }));
    await expect(readSettings(system, dir)).rejects.toThrow(/is damaged/);
  });

  it('reports nothing stored as null and a damaged file with a fix', async () => {
    const system = createSystem('/usr/bin');
    expect(await readSettings(system, dir)).toBeNull();
    await writeFile(settingsPath(dir), '{"url": 1');
    await expect(readSettings(system, dir)).rejects.toThrow(/is damaged: run "postern connect/);
  });
});
