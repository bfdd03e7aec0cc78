import { describe, expect, it } from 'vitest';
import { parseCommand } from './args.js';
import { UsageError } from './errors.js';

describe('parseCommand', () => {
  it('parses connect with every option', () => {
    expect(
      parseCommand([
        'connect',
        '--url',
        'https://gw.example.com',
        '--token',
        'pstn_x',
        '--daemon',
        '--config-dir',
        '/tmp/p',
        '--interface',
        'pstn-a1',
      ]),
    ).toEqual({
      kind: 'connect',
      connection: { url: 'https://gw.example.com', token: 'pstn_x', configDir: '/tmp/p' },
      iface: 'pstn-a1',
      daemon: true,
    });
    expect(parseCommand(['connect'])).toEqual({ kind: 'connect', connection: {}, daemon: false });
  });

  it('parses the Docker label options of connect --daemon, and refuses them without --daemon or malformed', () => {
    expect(
      parseCommand(['connect', '--daemon', '--docker-socket', '/run/docker.sock', '--docker-filter', 'project=web']),
    ).toEqual({
      kind: 'connect',
      connection: {},
      daemon: true,
      docker: { socket: '/run/docker.sock', filter: { key: 'project', value: 'web' } },
    });
    expect(parseCommand(['connect', '--daemon', '--docker'])).toMatchObject({ docker: {} });
    expect(() => parseCommand(['connect', '--docker'])).toThrow('--docker needs --daemon');
    expect(() => parseCommand(['connect', '--daemon', '--docker-filter', 'a=b;c'])).toThrow('LABEL=VALUE');
  });

  it('parses admin export|plan|apply', () => {
    expect(parseCommand(['admin', 'apply', '-f', 'gw.yaml', '--prune', '--dry-run', '--user', 'root'])).toEqual({
      kind: 'config',
      action: 'apply',
      operator: { user: 'root' },
      file: 'gw.yaml',
      prune: true,
      dryRun: true,
      json: false,
    });
    expect(() => parseCommand(['admin', 'plan'])).toThrow('needs -f FILE');
    expect(() => parseCommand(['admin', 'delete'])).toThrow('Usage: postern admin export|plan|apply');
  });

  it('parses disconnect and status', () => {
    expect(parseCommand(['disconnect', '--interface', 'wg7'])).toEqual({ kind: 'disconnect', local: { iface: 'wg7' } });
    expect(parseCommand(['status', '--json', '--health', '--config-dir', '/x'])).toEqual({
      kind: 'status',
      local: { configDir: '/x' },
      json: true,
      health: true,
    });
    expect(parseCommand(['status'])).toEqual({ kind: 'status', local: {}, json: false, health: false });
  });

  it('parses expose http with repeated and comma-separated CIDR lists', () => {
    expect(
      parseCommand([
        'expose',
        'http',
        'web',
        '--port',
        '8080',
        '--domain',
        'app.example.com',
        '--path',
        '/api',
        '--proto',
        'https',
        '--allow',
        '10.0.0.0/8,192.168.1.1',
        '--allow',
        '172.16.0.0/12',
        '--block',
        '10.1.2.3',
      ]),
    ).toEqual({
      kind: 'expose-http',
      connection: {},
      name: 'web',
      port: 8080,
      domain: 'app.example.com',
      path: '/api',
      proto: 'https',
      allow: ['10.0.0.0/8', '192.168.1.1', '172.16.0.0/12'],
      block: ['10.1.2.3'],
    });
  });

  it('parses expose tcp', () => {
    expect(
      parseCommand([
        'expose',
        'tcp',
        'mqtt',
        '--port',
        '1883',
        '--public-port',
        '31883',
        '--tls',
        '--domain',
        'mq.example.com',
        '--token',
        'pstn_t',
      ]),
    ).toEqual({
      kind: 'expose-tcp',
      connection: { token: 'pstn_t' },
      name: 'mqtt',
      port: 1883,
      udp: false,
      publicPort: 31883,
      tls: true,
      domain: 'mq.example.com',
      allow: [],
      block: [],
    });
    expect(parseCommand(['expose', 'tcp', 'dns', '--port', '53', '--udp'])).toMatchObject({ udp: true, tls: false });
  });

  it('parses services, enable, disable and rm', () => {
    expect(parseCommand(['services', '--json', '--url', 'http://gw:3000'])).toEqual({
      kind: 'services',
      connection: { url: 'http://gw:3000' },
      json: true,
    });
    expect(parseCommand(['enable', 'http', '12'])).toEqual({
      kind: 'service-action',
      action: 'enable',
      type: 'http',
      id: 12,
      connection: {},
    });
    expect(parseCommand(['disable', 'tcp', '3'])).toMatchObject({ action: 'disable', type: 'tcp', id: 3 });
    expect(parseCommand(['rm', 'tcp', '4', '--config-dir', '/d'])).toMatchObject({
      action: 'rm',
      type: 'tcp',
      id: 4,
      connection: { configDir: '/d' },
    });
  });

  it('answers --help for every command and --version', () => {
    expect(parseCommand([])).toEqual({ kind: 'help', topic: 'main' });
    expect(parseCommand(['--help'])).toEqual({ kind: 'help', topic: 'main' });
    expect(parseCommand(['help', 'expose', 'tcp'])).toEqual({ kind: 'help', topic: 'expose tcp' });
    for (const [argv, topic] of [
      [['connect', '--help'], 'connect'],
      [['disconnect', '-h'], 'disconnect'],
      [['status', '--help'], 'status'],
      [['expose', '--help'], 'expose'],
      [['expose', 'http', '--help'], 'expose http'],
      [['expose', 'tcp', '--help'], 'expose tcp'],
      [['services', '--help'], 'services'],
      [['enable', '--help'], 'enable'],
      [['disable', '--help'], 'disable'],
      [['rm', '--help'], 'rm'],
    ] as const) {
      expect(parseCommand(argv)).toEqual({ kind: 'help', topic });
    }
    expect(parseCommand(['--version'])).toEqual({ kind: 'version' });
    expect(parseCommand(['-V'])).toEqual({ kind: 'version' });
  });

  it.each([
    [['frobnicate'], /Unknown command "frobnicate"/],
    [['connect', '--bogus'], /Unknown option '--bogus'.*postern connect --help/],
    [['connect', '--url'], /argument missing/],
    [['connect', '--interface', 'much-too-long-name0'], /Invalid interface name/],
    [['connect', '--interface', 'bad name'], /Invalid interface name/],
    [['expose', 'http', 'web'], /missing --port P/],
    [['expose', 'http', '--port', '80'], /missing the service NAME/],
    [['expose', 'http', 'web', '--port', '70000'], /--port must be a port number from 1 to 65535/],
    [['expose', 'http', 'web', '--port', '80', '--proto', 'ftp'], /--proto must be http or https/],
    [
      ['expose', 'http', 'web', '--port', '80', '--path', '/shop'],
      /pass --domain NAME \(a domain that does not exist yet becomes your node's\)\. Run "postern expose http --help"/,
    ],
    [['expose', 'tcp', 'x', '--port', '53', '--udp', '--tls'], /--tls works with TCP only/],
    [['expose', 'smtp', 'x'], /expected "http" or "tcp"/],
    [['enable', 'ftp', '1'], /expected "http" or "tcp"/],
    [['rm', 'http', 'abc'], /numeric ID/],
    [['status', 'extra'], /unexpected argument "extra"/],
  ])('rejects %j with a usage error', (argv, message) => {
    let caught: unknown;
    try {
      parseCommand(argv);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UsageError);
    expect((caught as UsageError).exitCode).toBe(2);
    expect((caught as UsageError).message).toMatch(message);
  });
});
