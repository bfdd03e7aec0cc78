// A real OpenID Connect provider for the system tests (docs/ACCESS.md): the certified `oidc-provider` package, run in
// a namespace of its own over HTTPS. Its development interactions ask for any login name (the password is not
// checked) and a consent; the login name picks one of the accounts below. Nothing here imitates the protocol.
//
//   node oidc-provider.mjs CONFIG.json      (CONFIG: issuer, host, port, cert, key, clients)
// Prints "listening" when ready.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));

/** Login name → claims. Anyone else signs in as <name>@elsewhere.test with no groups. */
const accounts = {
  alice: { email: 'alice@corp.test', email_verified: true, name: 'Alice Example', groups: ['staff', 'ops'] },
  bob: { email: 'bob@partner.test', email_verified: true, name: 'Bob Partner', groups: ['partners'] },
  eve: { email: 'eve@evil.test', email_verified: true, name: 'Eve', groups: [] },
  mallory: { email: 'mallory@corp.test', email_verified: false, name: 'Mallory', groups: ['staff'] },
};

const provider = new Provider(config.issuer, {
  clients: config.clients,
  async findAccount(_ctx, id) {
    const claims = accounts[id] ?? { email: `${id}@elsewhere.test`, email_verified: true, groups: [] };
    return {
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, ...claims }),
    };
  },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
    groups: ['groups'],
  },
  scopes: ['openid', 'email', 'profile', 'groups'],
  cookies: { keys: [config.cookieKey] },
  features: { devInteractions: { enabled: true } },
  // A short life: the tests sign in a few times within a minute.
  ttl: { Session: 600, Interaction: 600, Grant: 600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
});
// The development interactions log a warning on every start; the test reads "listening" only.
provider.on('server_error', (_ctx, err) => process.stderr.write(`server_error ${err.message}\n`));

createServer({ cert: readFileSync(config.cert), key: readFileSync(config.key) }, provider.callback()).listen(
  config.port,
  config.host,
  () => process.stdout.write(`listening oidc ${config.issuer}\n`),
);
