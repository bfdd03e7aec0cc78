import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SystemInfo } from './entities.js';
import {
  GATEWAY_URL_PLACEHOLDER,
  connectCommand,
  dockerCommand,
  helmCommand,
  installCommand,
  shellWord,
} from './install-commands.js';

const PIN = 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
const TOKEN = 'pstn_0123456789abcdefghijklmnopqrstuvwxyzABCDEF';
const nodeInstall = {
  script: true,
  image: 'ghcr.io/postern/node:0.1.0',
  chart: 'oci://ghcr.io/postern/charts/postern-node',
  chartVersion: '0.1.0',
};
const selfSigned: SystemInfo = {
  publicUrl: 'https://gw.example.test:8443',
  certificate: { selfSigned: true, pin: PIN },
  nodeInstall,
};
const caSigned: SystemInfo = {
  publicUrl: 'https://gw.example.test',
  certificate: { selfSigned: false, pin: PIN },
  nodeInstall,
};

describe('installCommand', () => {
  it('pins curl to the self-signed certificate and hands URL, pin and token to the script in the pipe', () => {
    expect(installCommand(TOKEN, selfSigned)).toBe(
      [
        `{ curl -fsS --pinnedpubkey sha256//47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU= -k https://gw.example.test:8443/install.sh`,
        `  echo "postern_install --url 'https://gw.example.test:8443' --pin '${PIN}' --token '${TOKEN}'"`,
        `} | sudo sh`,
      ].join('\n'),
    );
  });

  it('lets curl check a CA-issued certificate, with no pin anywhere', () => {
    expect(installCommand(TOKEN, caSigned)).toBe(
      [
        `{ curl -fsS https://gw.example.test/install.sh`,
        `  echo "postern_install --url 'https://gw.example.test' --token '${TOKEN}'"`,
        `} | sudo sh`,
      ].join('\n'),
    );
    expect(installCommand(TOKEN, undefined)).toContain(`'${GATEWAY_URL_PLACEHOLDER}/install.sh'`);
  });

  it('runs in a shell as postern_install with exactly these arguments, and no process gets the token as one', () => {
    // A fake curl prints a stand-in install.sh; a fake sudo runs its command. Every program records its argv.
    const dir = mkdtempSync(join(tmpdir(), 'postern-install-command-'));
    try {
      const record = join(dir, 'argv.log');
      const stub = (name: string, body: string) => {
        writeFileSync(join(dir, name), `#!/bin/sh\nprintf '%s\\n' "${name} $*" >>'${record}'\n${body}\n`);
        chmodSync(join(dir, name), 0o755);
      };
      stub('curl', `printf '%s\\n' 'postern_install() { for a in "$@"; do printf "[%s]\\n" "$a"; done; }'`);
      stub('sudo', 'exec "$@"');
      const out = execFileSync('sh', {
        input: installCommand(TOKEN, selfSigned),
        env: { PATH: `${dir}:/usr/bin:/bin` },
      });
      expect(out.toString()).toBe(
        ['--url', 'https://gw.example.test:8443', '--pin', PIN, '--token', TOKEN].map((a) => `[${a}]\n`).join(''),
      );
      const argv = execFileSync('cat', [record]).toString();
      expect(argv).toContain('curl -fsS --pinnedpubkey sha256//47DEQ');
      expect(argv).not.toContain(TOKEN);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('docker, helm and connect commands', () => {
  it('run the published image with URL, pin and token, one option a line', () => {
    expect(dockerCommand(TOKEN, selfSigned)).toBe(
      [
        'docker run -d --name postern-node --restart unless-stopped \\',
        '  --cap-add NET_ADMIN --device /dev/net/tun \\',
        '  -e POSTERN_URL=https://gw.example.test:8443 \\',
        `  -e POSTERN_PIN=${PIN} \\`,
        `  -e POSTERN_TOKEN=${TOKEN} \\`,
        '  ghcr.io/postern/node:0.1.0',
      ].join('\n'),
    );
    expect(dockerCommand(TOKEN, caSigned)).not.toContain('POSTERN_PIN');
  });

  it('install the published chart at the gateway’s version, naming a fork’s image only when it is not the default', () => {
    expect(helmCommand(TOKEN, selfSigned)).toBe(
      [
        'helm install postern-node oci://ghcr.io/postern/charts/postern-node --version 0.1.0 \\',
        '  --set gatewayUrl=https://gw.example.test:8443 \\',
        `  --set gatewayPin=${PIN} \\`,
        `  --set token.value=${TOKEN}`,
      ].join('\n'),
    );
    const fork: SystemInfo = {
      ...caSigned,
      nodeInstall: {
        ...nodeInstall,
        image: 'registry.example.com:5000/team/node:0.1.0',
        chart: 'oci://registry.example.com:5000/team/charts/postern-node',
      },
    };
    expect(helmCommand(TOKEN, fork)).toBe(
      [
        'helm install postern-node oci://registry.example.com:5000/team/charts/postern-node --version 0.1.0 \\',
        '  --set gatewayUrl=https://gw.example.test \\',
        `  --set token.value=${TOKEN} \\`,
        '  --set image.repository=registry.example.com:5000/team/node',
      ].join('\n'),
    );
  });

  it('connect with the pin only for a self-signed certificate', () => {
    expect(connectCommand(TOKEN, selfSigned)).toBe(
      `postern connect --url https://gw.example.test:8443 --token ${TOKEN} --pin ${PIN}`,
    );
    expect(connectCommand(TOKEN, caSigned)).toBe(`postern connect --url https://gw.example.test --token ${TOKEN}`);
    expect(connectCommand('<YOUR_TOKEN>', undefined)).toBe(
      `postern connect --url ${GATEWAY_URL_PLACEHOLDER} --token <YOUR_TOKEN>`,
    );
  });

  it('quote what a shell would read otherwise', () => {
    expect(shellWord('https://gw.example.test')).toBe('https://gw.example.test');
    expect(shellWord('<x>')).toBe(`'<x>'`);
    expect(shellWord(`it's`)).toBe(`'it'\\''s'`);
  });
});
