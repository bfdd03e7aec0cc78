// Help texts, one per command; `postern COMMAND --help` prints the matching entry.

export type HelpTopic =
  | 'main'
  | 'connect'
  | 'disconnect'
  | 'uninstall'
  | 'status'
  | 'expose'
  | 'expose http'
  | 'expose tcp'
  | 'services'
  | 'networks'
  | 'access'
  | 'share'
  | 'enable'
  | 'disable'
  | 'rm'
  | 'admin';

const CONNECTION_OPTIONS = `  --url URL          the gateway's public HTTPS address, https://host[:port] (default: stored by connect,
                     else $POSTERN_URL)
  --token TOKEN      the node's access token, pstn_… (default: stored, else $POSTERN_TOKEN)
  --token-file FILE  read the token from the first line of FILE (- for standard input) instead: an
                     argument shows it to every user of this machine in \`ps\`
  --pin sha256:PIN   trust exactly the certificate with this public-key pin (a gateway's self-signed
                     certificate) instead of the CA store; the console's connect command shows it
                     (default: stored with the URL, else $POSTERN_PIN)
  --insecure         allow a plain http:// URL to a public address: token and WireGuard key travel
                     unencrypted. Without it such URLs are refused; http:// to loopback, private
                     (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) and link-local addresses is allowed
  --config-dir DIR   where connect stores its files (default: $POSTERN_CONFIG_DIR, else /etc/postern)`;

const ACCESS_OPTIONS = `Access options (who may open it in a browser; a node's token may only make it stricter than its
domain's policy: the gateway refuses anything else and says which option):
  --auth MODE               protected (implied by the options below), public, or inherit (the domain's)
  --allow-email E           single sign-on lets in this email (repeat, or separate with commas)
  --allow-email-domain D    ... everyone with an email at this domain
  --allow-group G           ... members of this group (the provider's groups claim)
  --sso-provider ID         the identity provider (default: the one of the domain's policy)
  --password-file FILE      a password or PIN (6+ characters) read from FILE's first line; never pass it
                            on the command line. Not allowed when the domain's policy protects it already
  --no-password             remove the password (without either option the stored one is kept)
  --share-links             share links of the service let their holders in ("postern share")
  --bypass-path P           no sign-in below this path, e.g. a webhook (repeat)
  --bypass-network CIDR     no sign-in from these addresses (repeat)
  --session DURATION        how long a visitor stays signed in (5m to 30d, default 24h)
The options describe the whole policy: a list or --share-links left out is empty or off.`;

export const helpTexts: Record<HelpTopic, string> = {
  main: `Usage: postern COMMAND [options]

Connects this machine to a Postern gateway over WireGuard and publishes its services.

Commands:
  connect       fetch this node's WireGuard config and bring the tunnel up
  disconnect    take the tunnel down
  uninstall     remove what install.sh installed: service, binary, config, interface
  status        show the tunnel state (--json, --health)
  expose        publish a local service: expose http NAME --port P --domain D, expose tcp NAME --port P
  services      list this node's services
  networks      show or set the subnets this gateway node routes: networks [set CIDR...]
  access        show or set who may open an HTTP service: access ID [--auth …]
  share         share links of an HTTP service: share list|create|revoke ID …
  enable        enable a service: enable http|tcp ID
  disable       disable a service: disable http|tcp ID
  rm            delete a service: rm http|tcp ID
  admin         the gateway's configuration as one document: admin export|plan|apply (as the console's admin)

Options:
  -h, --help     show help (also after any command)
  -V, --version  print the version

Environment: POSTERN_URL, POSTERN_TOKEN, POSTERN_PIN, POSTERN_CONFIG_DIR (used when neither a flag nor a stored
value is set). Certificates are checked against the system's CA store plus NODE_EXTRA_CA_CERTS, unless pinned.`,

  admin: `Usage: postern admin export [--json]
       postern admin plan -f FILE [--prune] [--json]
       postern admin apply -f FILE [--prune] [--dry-run] [--json]
       (each with [--url URL] [--user NAME] [--password-file FILE] [--otp-file FILE] [--pin sha256:PIN]
        [--insecure])

The gateway's nodes, tokens (metadata only), domains, services, access policies and identity providers as one
YAML (or JSON) document, for review and version control (docs/CONFIG-AS-CODE.md). These are the operator's calls:
they sign in as the console's admin, not with a node's token.

  export   print the document of the running gateway (YAML; --json for JSON). No secret is ever in it.
  plan     compare FILE with the gateway: what applying it would create, change and delete, and what is wrong
  apply    show the plan and carry it out (nothing, if FILE has an error); a second apply changes nothing.
           Tokens it creates are printed once.

Options:
  -f, --file FILE       the document (- for standard input)
  --prune               also delete what the document does not name (never the gateway's own node, nor services
                        published by Docker labels)
  --dry-run             apply: only show the plan
  --json                print the answer as JSON
  --url URL             the gateway's HTTPS address (default: stored by connect, else $POSTERN_URL)
  --user NAME           the console's admin (default admin)
  --password-file FILE  read the password from FILE (- for standard input); else $POSTERN_ADMIN_PASSWORD
  --otp-file FILE       an admin with two-factor sign-in: read the code (authenticator or recovery code) from
                        FILE (- for standard input); else $POSTERN_ADMIN_OTP; else it is asked for on a terminal.
                        Never an argument: a recovery code is a lasting secret, and \`ps\` shows arguments
  --pin sha256:PIN      trust exactly this certificate (default: stored with the stored URL, else $POSTERN_PIN)
  --insecure            allow plain HTTP to a public address
  --config-dir DIR      where connect stored its settings`,

  connect: `Usage: postern connect --url URL --token TOKEN [--pin sha256:PIN] [--insecure] [--daemon]
                       [--docker] [--docker-socket PATH] [--docker-filter LABEL=VALUE]
                       [--config-dir DIR] [--interface IF]

Fetches this node's WireGuard configuration from the gateway, stores URL, token, pin and configuration (mode 0600),
and brings the tunnel up with kernel WireGuard, or wireguard-go when the kernel has none. Needs root (or CAP_NET_ADMIN).
Refuses a plain http:// URL to a public address unless --insecure is given.

Options:
${CONNECTION_OPTIONS}
  --interface IF     WireGuard interface name, at most 15 characters (default: stored, else postern0)
  --daemon           stay in the foreground: watch the tunnel, re-apply server-side changes, reconnect after
                     network loss; SIGTERM/SIGINT take the tunnel down and exit. With several gateways it
                     follows their list without recreating the tunnel, and moves the routes to another gateway
                     when the one carrying them has not handshaken for 200 s
  --docker           with --daemon: publish the local Docker engine's containers that carry postern.* labels
                     as this node's services, and keep them in step with the containers (docs/LABELS.md);
                     problems are logged and shown by "postern status"
  --docker-socket PATH  the engine's socket (default /var/run/docker.sock; implies --docker)
  --docker-filter LABEL=VALUE  only containers that also carry this label (implies --docker)`,

  disconnect: `Usage: postern disconnect [--config-dir DIR] [--interface IF]

Removes the WireGuard interface (and stops wireguard-go). Stored settings are kept for the next connect.`,

  uninstall: `Usage: postern uninstall [--config-dir DIR] [--interface IF]

Removes what the gateway's install.sh installed: stops and removes the systemd service postern-node, takes the
tunnel down (interface and wireguard-go), deletes the config directory (URL, token, WireGuard key) and this
executable (/usr/local/bin/postern). Packages the installer added (wireguard-tools, wireguard-go) are named, not
removed: other programs may use them. The node stays in the console: delete it there.`,

  status: `Usage: postern status [--json] [--health] [--config-dir DIR] [--interface IF]

Shows the tunnel: interface, address, gateway, latest handshake and traffic. With several gateways, one line
each: name, endpoint, latest handshake, and "routes" on the one that carries the tunnel's routes.

Options:
  --json     print one JSON object
  --health   exit 0 only when the interface is up and the gateway answers its tunnel health check through the
             tunnel within 2 s (with several gateways: each is asked, and one answering is enough)`,

  expose: `Usage: postern expose http NAME --port P [options]
       postern expose tcp NAME --port P [options]

Run "postern expose http --help" or "postern expose tcp --help" for the options.`,

  'expose http': `Usage: postern expose http NAME --port P --domain D [--path /p] [--proto https] [--host H]
                           [--allow CIDR…] [--block CIDR…] [--ttl 1h] [access options]

Publishes a web service of this node through the gateway's nginx, on a domain of this node. With access options
the service gets its own access policy before it is served (created disabled, the policy set, then enabled); if
the gateway refuses the policy, the service is deleted again and nothing is published.

Options:
  --port P         port of the service on this node (required)
  --domain D       domain it is served on (required); one that does not exist yet becomes this node's,
                   one of the admin or another node is refused
  --path /p        path prefix it is served under
  --proto PROTO    protocol between gateway and service: http (default) or https
  --host H         backend host as seen from the gateway (default: this node's tunnel address)
  --allow CIDR     only these clients (repeat, or separate with commas)
  --block CIDR     never these clients (repeat, or separate with commas)
  --ttl DURATION   publish it for this long only (30m, 1h, 7d; at least 1m): then the gateway disables it
${ACCESS_OPTIONS}
${CONNECTION_OPTIONS}`,

  'expose tcp': `Usage: postern expose tcp NAME --port P [--udp] [--public-port N] [--tls --domain D] [--host H]
                          [--allow CIDR…] [--block CIDR…] [--ttl 1h]

Publishes a raw TCP (or UDP) port of this node through the gateway.

Options:
  --port P           port of the service on this node (required)
  --udp              UDP instead of TCP
  --public-port N    port on the gateway (default: the gateway picks one)
  --tls              the gateway terminates TLS (TCP only), with the certificate of --domain
  --domain D         a domain of this node (required with --tls)
  --host H           backend host as seen from the gateway (default: this node's tunnel address)
  --allow CIDR       only these clients (repeat, or separate with commas)
  --block CIDR       never these clients (repeat, or separate with commas)
  --ttl DURATION     publish it for this long only (30m, 1h, 7d; at least 1m): then the gateway disables it
${CONNECTION_OPTIONS}`,

  services: `Usage: postern services [--json] [options]

Lists this node's HTTP and TCP/UDP services.

Options:
  --json             print JSON: { http: [...], tcp: [...] }
${CONNECTION_OPTIONS}`,

  networks: `Usage: postern networks [set CIDR [CIDR...]] [options]

Without arguments, prints the subnets this node routes into the tunnel (one a line). With "set", replaces them:
the gateway then sends traffic for hosts in these subnets to this node. Only for a node the gateway's operator
made a gateway and allowed to set its networks (both in the console); private ranges only (10/8, 172.16/12,
192.168/16, 100.64/10), each /16 or narrower (the gateway's POSTERN_NODE_NETWORK_MIN_PREFIX), at most 16, none
overlapping another, and none holding an address the gateway itself uses or another node routes. This machine
must forward the traffic to those hosts (ip_forward and, usually, masquerade).

Options:
${CONNECTION_OPTIONS}`,

  access: `Usage: postern access ID [--json] [access options] [options]

Without access options, shows who may open this node's HTTP service ID: the policy applied now and where it comes
from (the service's own, or its domain's), the service's own policy and who set it. With them, sets the service's
own policy; --auth inherit drops it, so the domain's applies. A policy the gateway's operator set cannot be changed
by a node's token.

Options:
  --json                    print the gateway's answer as JSON
${ACCESS_OPTIONS}
${CONNECTION_OPTIONS}`,

  share: `Usage: postern share list ID [--json] [options]
       postern share create ID NAME [--path /p] [--ttl 7d] [options]
       postern share revoke ID LINK_ID [options]

Share links of this node's HTTP service ID: whoever holds one gets in without signing in, until it expires or is
revoked (revoking it also signs out everyone who used it). The service's access policy must allow share links
(--share-links, or the domain's policy). The link's URL is printed once, when it is created: store it securely.

Options:
  --path /p          the link lets in below this path only (within the service's path)
  --ttl DURATION     the link expires after this long (1m to 366d; default: never, until revoked)
  --json             list: print JSON
${CONNECTION_OPTIONS}`,

  enable: `Usage: postern enable http|tcp ID [options]

Enables a service of this node.

Options:
${CONNECTION_OPTIONS}`,

  disable: `Usage: postern disable http|tcp ID [options]

Disables a service of this node (it stays configured).

Options:
${CONNECTION_OPTIONS}`,

  rm: `Usage: postern rm http|tcp ID [options]

Deletes a service of this node.

Options:
${CONNECTION_OPTIONS}`,
};
