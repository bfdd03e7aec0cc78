import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { runIn } from './exec.js';
import { makeServerTls } from './server-tls.js';
import type { Lab } from './lab.js';
import type { ManagedProcess } from './processes.js';

// The identity side of the access tests (docs/ACCESS.md): a real OpenID Connect provider (the certified
// `oidc-provider` package, programs/oidc-provider.mjs) over HTTPS in a namespace of its own, and Chromium run inside
// a namespace (the client's), so a browser reaches the gateway and the provider as a visitor on the internet would.

const OIDC_PROVIDER = fileURLToPath(new URL('./programs/oidc-provider.mjs', import.meta.url));

export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface OidcProvider {
  issuer: string;
  /** The CA of the provider's HTTPS certificate: the gateway trusts it through NODE_EXTRA_CA_CERTS. */
  caFile: string;
  readonly process: ManagedProcess;
}

/** Starts the provider in `ns`, listening on https://<ip>:443. */
export async function startOidcProvider(
  lab: Lab,
  ns: string,
  ip: string,
  clients: OidcClient[],
): Promise<OidcProvider> {
  const dir = lab.makeTempDir('idp');
  const tls = await makeServerTls(dir, 'idp', {
    caSubject: '/CN=IdP test CA',
    subject: `/CN=${ip}`,
    subjectAltName: `IP:${ip}`,
  });
  const issuer = `https://${ip}`;
  const configFile = join(dir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      issuer,
      host: ip,
      port: 443,
      cert: tls.certFile,
      key: tls.keyFile,
      cookieKey: randomBytes(16).toString('hex'),
      clients: clients.map((client) => ({
        ...client,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      })),
    }),
  );
  const child = lab.spawn(ns, 'oidc provider', process.execPath, [OIDC_PROVIDER, configFile]);
  await child.waitForOutput(/^listening /m, 15_000);
  return { issuer, caFile: tls.caFile, process: child };
}

/**
 * Chromium inside `ns`: playwright starts a one-line wrapper that enters the namespace and execs the browser, so
 * the DevTools pipe is the browser's own and every connection it opens starts in that namespace.
 */
export async function launchBrowserIn(lab: Lab, ns: string, extraArgs: readonly string[] = []): Promise<Browser> {
  if (!/^[a-z0-9-]{1,64}$/.test(ns)) throw new Error(`unexpected namespace name ${ns}`);
  // Chromium fails requests in flight with net::ERR_NETWORK_CHANGED when the namespace's addresses change. The lab's
  // links are IPv4 only, but the kernel gives each veth an IPv6 link-local address whose duplicate-address detection
  // ends a moment after the link comes up (a second address event): seen once failing the first navigation of
  // e2e/system/access.test.ts. IPv6 off in the browser's namespace (nothing there uses it) leaves no such event.
  await runIn(ns, 'sysctl', ['-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1', 'net.ipv6.conf.default.disable_ipv6=1']);
  const wrapper = join(lab.makeTempDir('chromium'), 'chromium-in-netns');
  writeFileSync(wrapper, `#!/bin/sh\nexec ip netns exec ${ns} /usr/bin/chromium "$@"\n`, { mode: 0o755 });
  return await chromium.launch({
    executablePath: wrapper,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // The gateway and the provider use test certificates.
      '--ignore-certificate-errors',
      ...extraArgs,
    ],
  });
}
