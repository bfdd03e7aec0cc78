import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { harness } from '../cli-harness.js';
import { createFakeSystem } from '../fake-system.js';
import { startAgentServer } from '../fixtures.js';
import { runCli } from '../run.js';

// `postern admin export|plan|apply` against a loopback server answering like the gateway's configuration API
// (the API itself is tested in apps/server/src/modules/config/config.test.ts).

const SESSION = 'session-token-for-the-test';
const CHALLENGE = 'challenge-of-the-password-step';
const CODE = '492039';
const document = { version: 1, identityProviders: [], nodes: [{ name: 'home', http: [] }], domains: [] };
const plan = {
  changes: [
    { action: 'create', kind: 'node', name: 'home', fields: [] },
    {
      action: 'update',
      kind: 'httpService',
      name: 'app.example.com/',
      fields: [{ field: 'backendPort', before: 80, after: 8080 }],
    },
  ],
  errors: [],
  notes: ['1 service published by Docker labels is not part of the document: the labels are their configuration'],
};

function gateway() {
  return startAgentServer((request) => {
    if (request.url === '/api/auth/login') {
      const { username, password } = JSON.parse(request.body) as { username: string; password: string };
      if (username === 'secure' && password === 'right') {
        return { status: 200, body: { twoFactorRequired: true, challenge: CHALLENGE, expires_in: 300 } };
      }
      return password === 'right'
        ? { status: 200, body: { token: SESSION, expires_in: 3600 } }
        : { status: 401, body: { message: 'Invalid credentials' } };
    }
    if (request.url === '/api/auth/login/2fa') {
      const { challenge, code } = JSON.parse(request.body) as { challenge: string; code: string };
      return challenge === CHALLENGE && code === CODE
        ? { status: 200, body: { token: SESSION, expires_in: 3600 } }
        : { status: 401, body: { message: 'Invalid code' } };
    }
    if (request.authorization !== `Bearer ${SESSION}`) return { status: 401, body: { message: 'Unauthorized' } };
    if (request.url === '/api/auth/logout') return { status: 204 };
    if (request.url === '/api/config/export') return { status: 200, body: document };
    if (request.url === '/api/config/plan') return { status: 200, body: plan };
    if (request.url === '/api/config/apply') {
      return {
        status: 200,
        body: { plan, applied: 2, tokens: [{ node: 'home', name: 'ci', token: 'pstn_shown_once' }] },
      };
    }
    return { status: 404, body: { message: 'Not found' } };
  });
}

describe('postern admin', () => {
  it('exports the document as YAML, signed in with the password from a file, and signs out', async () => {
    const server = await gateway();
    try {
      const system = createFakeSystem({ hasKernelWireguard: false });
      system.files.set('/pw', { text: 'right\n', mode: 0o600 });
      const h = harness(system);
      expect(await runCli(['admin', 'export', '--url', server.url, '--password-file', '/pw'], h.context)).toBe(0);
      expect(parse(h.out())).toMatchObject(document);
      expect(server.requests.map((request) => request.url)).toEqual([
        '/api/auth/login',
        '/api/config/export',
        '/api/auth/logout',
      ]);
    } finally {
      await server.close();
    }
  });

  it('plans and applies a file, printing each change, the notes and a created token once', async () => {
    const server = await gateway();
    try {
      const system = createFakeSystem({ hasKernelWireguard: false });
      system.files.set('/gw.yaml', { text: 'version: 1\nnodes:\n  - name: home\n', mode: 0o644 });
      const h = harness(system, { adminPassword: 'right' });
      expect(await runCli(['admin', 'apply', '-f', '/gw.yaml', '--url', server.url, '--prune'], h.context)).toBe(0);
      expect(h.out()).toBe(
        [
          '+ create node home',
          '~ update httpService app.example.com/',
          '    backendPort: 80 → 8080',
          `note: ${plan.notes[0] ?? ''}`,
          'Applied 2 changes.',
          'token home/ci: pstn_shown_once  (shown once: store it now)',
          '',
        ].join('\n'),
      );
      const sent = server.requests.find((request) => request.url === '/api/config/apply');
      expect(JSON.parse(sent?.body ?? '{}')).toMatchObject({
        document: { version: 1, nodes: [{ name: 'home' }] },
        prune: true,
      });

      const dry = harness(system, { adminPassword: 'right' });
      expect(await runCli(['admin', 'apply', '--dry-run', '-f', '/gw.yaml', '--url', server.url], dry.context)).toBe(0);
      expect(dry.out()).not.toContain('Applied');
      expect(server.requests.filter((request) => request.url === '/api/config/apply')).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('signs in an admin with two-factor sign-in: the code from a file, the environment or the terminal, never argv', async () => {
    const server = await gateway();
    try {
      const system = createFakeSystem({ hasKernelWireguard: false });
      system.files.set('/otp', { text: `${CODE}\n`, mode: 0o600 });
      const fromFile = harness(system, { adminPassword: 'right' });
      const args = ['admin', 'export', '--url', server.url, '--user', 'secure'];
      expect(await runCli([...args, '--otp-file', '/otp'], fromFile.context)).toBe(0);
      expect(parse(fromFile.out())).toMatchObject(document);
      expect(server.requests.map((request) => request.url)).toEqual([
        '/api/auth/login',
        '/api/auth/login/2fa',
        '/api/config/export',
        '/api/auth/logout',
      ]);
      expect(JSON.parse(server.requests[1]?.body ?? '{}')).toEqual({ challenge: CHALLENGE, code: CODE });

      const fromEnv = harness(system, { adminPassword: 'right', adminOtp: CODE });
      expect(await runCli(args, fromEnv.context)).toBe(0);

      const asked: string[] = [];
      const atTerminal = harness(system, { adminPassword: 'right' });
      atTerminal.context.askSecret = (question) => {
        asked.push(question);
        return Promise.resolve(`${CODE}\n`);
      };
      expect(await runCli(args, atTerminal.context)).toBe(0);
      expect(asked).toEqual(['Two-factor code for "secure": ']);

      // A script without a code is told how to give one, and the code is not an argument.
      const script = harness(system, { adminPassword: 'right' });
      expect(await runCli(args, script.context)).toBe(2);
      expect(script.err()).toContain('pass --otp-file FILE');
      expect(await runCli([...args, '--otp', CODE], harness(system, { adminPassword: 'right' }).context)).toBe(2);

      const wrong = harness(system, { adminPassword: 'right', adminOtp: '000000' });
      expect(await runCli(args, wrong.context)).toBe(1);
      expect(wrong.err()).toBe(
        'postern: The gateway refused the second-factor code for "secure" (a code is accepted once)\n',
      );
      expect(wrong.err()).not.toContain('000000');
    } finally {
      await server.close();
    }
  });

  it('says what is wrong: a refused password, no password, a file that is not YAML', async () => {
    const server = await gateway();
    try {
      const system = createFakeSystem({ hasKernelWireguard: false });
      system.files.set('/bad.yaml', { text: 'version: [1\n', mode: 0o644 });
      const wrong = harness(system, { adminPassword: 'wrong' });
      expect(await runCli(['admin', 'export', '--url', server.url], wrong.context)).toBe(1);
      expect(wrong.err()).toBe('postern: The gateway refused the sign-in as "admin"\n');
      const none = harness(system);
      expect(await runCli(['admin', 'export', '--url', server.url], none.context)).toBe(2);
      expect(none.err()).toContain('No password');
      const bad = harness(system, { adminPassword: 'right' });
      expect(await runCli(['admin', 'plan', '-f', '/bad.yaml', '--url', server.url], bad.context)).toBe(1);
      expect(bad.err()).toContain('/bad.yaml is not YAML or JSON');
    } finally {
      await server.close();
    }
  });
});
