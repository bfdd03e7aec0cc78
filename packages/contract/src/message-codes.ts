// Stable codes of the server's messages (docs/api.md "Message codes"), so a console shows them in the operator's
// language while the API keeps its English texts. One table for the field errors of a 422 (`{ field, message, code,
// params }`) and the `message` of other error answers (`messageCode`, `params`). The English texts are today's,
// word for word: the server (and the console's own checks with the same schemas) build them in messages.ts and the
// modules; `describeMessage` finds a text's code and the values in it, in one place at the edge (the error handler
// and `toFieldErrors`), so no message site can forget its code. The console's catalogue has `error.<code>` for each,
// with the same `{params}`.

/** A message's values (a number, a name, an address): data, never English words. */
export type MessageParams = Record<string, string | number>;

/** An English text with `{name}` placeholders, or one of its forms with some values fixed (`1 domain`). */
type Template = string | readonly [text: string, fixed: MessageParams];

export const messageTexts = {
  // ---- The spec's default validation messages and the rules without a spec text (messages.ts)
  required: 'This field is required',
  invalid_email: 'This field must be a valid email',
  invalid_uri: 'This field must be a valid uri',
  invalid_domain: 'This field must contain a valid domain name',
  not_a_number: 'This field must be a number',
  not_an_integer: 'This field must be an integer',
  empty: 'This field is not allowed to be empty',
  not_an_array: 'This field must be an array',
  too_short: 'This field must be at least {min} characters long',
  too_long: 'This field must be less than or equal to {max} characters long',
  too_small: 'This field must be greater than or equal to {min}',
  too_big: 'This field must be less than or equal to {max}',
  not_one_of: 'This field must be one of {values}',
  invalid_ipv4: 'This field must be a valid IPv4 address',
  invalid_ip_or_cidr: 'This field must be a valid IPv4 address, optionally with a CIDR',
  invalid_cidr: 'This field must be a valid IP address with a CIDR',
  invalid_host: 'This field must be a valid IP address or host name',
  invalid_path: "This field must start with '/' and contain only letters, digits, '-', '.', '_', '~' and '/'",
  path_dot_end: "No part of this path may end with '.'",
  not_a_boolean: 'This field must be a boolean',
  not_a_string: 'This field must be a string',
  control_characters: 'This field must not contain line breaks or other control characters',
  invalid_date: 'This field must be a valid date',
  date_in_past: 'This field must not be earlier than now',
  expiry_too_far: 'This field must be at most 366 days from now',
  expiry_twice: 'Give either expiresAt or ttl, not both',
  gateway_network_not_allowed: 'This field must be empty unless the node is a gateway',
  gateway_network_not_first: 'This field must be the first of gatewayNetworks',
  token_networks_not_gateway: 'This field must be false unless the node is a gateway',
  domain_or_path: 'Either a domain or a path is required',
  console_host: "This field must not be the console's host name",
  domain_of_other_nodes:
    'This domain is not yours to use: use a domain your nodes already use, or a new one (an owner or admin can use any)',
  domain_not_yours:
    "This domain is not assigned to your node: use a domain of your own (a new one becomes your node's) or ask the gateway's operator to assign it",
  domain_required_for_node:
    "A node publishes web services on a domain of its own: pass --domain NAME (a domain that does not exist yet becomes your node's)",
  owner_unknown: 'This node does not exist',
  owner_is_local: 'The local node cannot own domains',
  reserved_path_acme:
    'This field must not be /.well-known/acme-challenge or a path below it: certificate validation (ACME) uses it',
  reserved_path_internal: "This field must not be /_postern or a path below it: it is the gateway's internal path",
  reserved_path_api:
    "This field must not be /api or a path below it: services without a domain share the console's host name, whose session belongs to /api (give the service a domain to use this path)",
  reserved_path: 'This field must not be {path} or a path below it: the gateway reserves it',
  host_bits: 'This field must be a network address: {value} has host bits set (did you mean {network}?)',
  networks_overlap: '{network} overlaps {other}, another network of this node',

  // ---- Services (HTTP and TCP/UDP)
  port_in_use: 'Port {port}/{proto} is already used',
  port_in_use_by: 'Port {port}/{proto} is already used by the service "{service}"',
  port_wireguard: "Port {port}/{proto} is the gateway's WireGuard port",
  no_free_port: 'No free {proto} port is left in {low}-{high}; delete a service or widen POSTERN_TCP_PORT_RANGE',
  path_in_use: 'The path {path} on {domain} is already used',
  path_in_use_by: 'The path {path} on {domain} is already used by the service "{service}"',
  path_in_use_default_host: 'The path {path} on the default host is already used',
  path_in_use_default_host_by: 'The path {path} on the default host is already used by the service "{service}"',
  path_case_clash:
    'The path {path} on {domain} differs only in letter case from a path already used there: the gateway cannot tell such paths apart',
  path_case_clash_by:
    'The path {path} on {domain} differs only in letter case from {other} (the service "{service}"): the gateway cannot tell such paths apart',
  path_case_clash_default_host:
    'The path {path} on the default host differs only in letter case from a path already used there: the gateway cannot tell such paths apart',
  path_case_clash_default_host_by:
    'The path {path} on the default host differs only in letter case from {other} (the service "{service}"): the gateway cannot tell such paths apart',
  backend_host_node: 'This field must be an IP address the node address or {address}',
  backend_host_network: "This field must be an IP address inside the node's network {network} or {address}",
  backend_host_networks: "This field must be an IP address inside one of the node's networks {networks} or {address}",
  tls_needs_domain:
    'TLS termination needs a domain of this node (--domain): without one it would be served with the console’s certificate',
  cursor_unknown: 'Not a cursor this list gave',
  cursor_needs_name_order: 'A cursor follows the order by name only',
  service_console_host: "The service uses the console's host name {host}: move it to another domain before enabling it",
  service_reserved_path:
    "The service's path {path} is reserved ({reserved} and below): change its path before enabling it",
  quota_services:
    'This node has reached its limit of {limit} services (POSTERN_NODE_MAX_SERVICES on the gateway): delete one of its services first',
  quota_ports:
    'This node has reached its limit of {limit} public TCP/UDP ports (POSTERN_NODE_MAX_PORTS on the gateway): delete one of its TCP/UDP services first',
  quota_domains:
    'This node has reached its limit of {limit} domains (POSTERN_NODE_MAX_DOMAINS on the gateway): publish on one of its domains',

  // ---- Names already taken
  domain_taken: 'The domain {domain} already exists',
  dns_provider_taken: 'A DNS provider named {name} already exists',
  certificate_authority_taken: 'A certificate authority named {name} already exists',
  identity_provider_taken: 'An identity provider named {name} already exists',
  channel_name_taken: 'A notification channel named {name} already exists',
  username_taken: 'An account or a pending invite named {username} already exists',

  // ---- Nodes
  address_none_free: 'No free address in the VPN subnet',
  vpn_subnet_full: 'VPN subnet {subnet} is full: no free address for a new node',
  address_outside_subnet: 'This address must lie inside the VPN subnet {subnet}',
  address_reserved: 'This address is reserved (network or broadcast address)',
  address_in_use: 'This address is already in use',
  local_node_edited: 'The local node cannot be edited',
  local_node_connected: 'The local node cannot be connected',
  local_node_disconnected: 'The local node cannot be disconnected',
  local_node_deleted: 'The local node cannot be deleted',
  local_node_no_config: 'The local node has no config to download',
  local_node_no_tokens: 'The local node cannot have access tokens',

  // ---- Access policies and identity providers (access.ts)
  access_no_way_in: 'A protected service needs a way in: single sign-on (providerId), a password or share links',
  access_no_allow_list: 'Name who may sign in: at least one email, email domain or group',
  access_needs_domain:
    "Access policies need a domain: services without one share the console host's origin with every other tenant",
  identity_provider_unknown: 'This identity provider does not exist',
  identity_provider_in_use: [
    'The identity provider {name} is used by {count} access policies; change them first',
    ['The identity provider {name} is used by 1 access policy; change them first', { count: 1 }],
  ],
  access_inherit_has_no_fields: "This field must be empty when the service inherits its domain's policy (mode inherit)",
  access_set_by_operator:
    "The gateway's operator set this service's access policy: ask them to change it (a node's token may not)",
  share_links_off: "This service's access policy does not allow share links",
  invalid_group: 'This field must hold group names of printable characters without commas',
  invalid_issuer: 'This field must be an https URL (the issuer of an OpenID Connect provider)',
  invalid_claim: "This field must be a claim name (letters, digits and '_', '.', ':', '/', '-')",
  invalid_scope: 'This field must hold scope names (printable characters without spaces or quotes)',
  discovery_failed: 'Discovery at {issuer} failed: {reason}',
  access_domain_protects: "The domain's access policy protects this service: a node's token may only make it stricter",
  access_domain_provider: "Single sign-on must use the domain policy's identity provider",
  access_not_let_in: "{value} is not let in by the domain's access policy",
  access_own_password: "A password of your own would let in people the domain's access policy does not",
  access_checked_by_domain: "{value} is checked by the domain's access policy",
  access_session_above_domain: "This field must be less than or equal to {max} (the domain's policy)",
  share_link_path: "This field must be the service's path ({path}) or a path below it",

  // ---- Certificates (certificate-messages.ts)
  wildcard_needs_dns: 'A wildcard domain gets its certificate through a DNS challenge only: choose dns-01',
  dns_needs_provider: 'Choose the DNS provider that writes the challenge record',
  dns_provider_unknown: 'This DNS provider does not exist',
  certificate_authority_unknown: 'This certificate authority does not exist',
  dns_provider_in_use: [
    'The DNS provider {name} is used by {count} domains: choose another one for them first',
    ['The DNS provider {name} is used by 1 domain: choose another one for them first', { count: 1 }],
  ],
  certificate_authority_in_use: [
    'The certificate authority {name} is used by {count} domains: choose another one for them first',
    ['The certificate authority {name} is used by 1 domain: choose another one for them first', { count: 1 }],
  ],
  upload_certificate_first: 'Upload your certificate first (Certificates → Upload)',
  certificate_pem: 'This field must hold one or more PEM certificates (-----BEGIN CERTIFICATE-----)',
  private_key_pem: 'This field must hold one PEM private key (-----BEGIN PRIVATE KEY-----, unencrypted)',
  key_mismatch: 'This private key does not belong to the first certificate of the chain',
  certificate_names_mismatch: 'The certificate is for {names}, not for {domain}',
  certificate_no_names: 'The certificate is for no DNS name, not for {domain}',
  certificate_expired: 'The certificate expired on {date}',
  certificate_not_yet_valid: 'The certificate is not valid before {date}',
  chain_order:
    "Certificate {position} of the chain is not signed by certificate {next}: put the server's certificate first, then each issuer in order",
  chain_signature:
    'Certificate {position} of the chain names certificate {next} as its issuer, but its signature does not verify',
  chain_expired: 'Certificate {position} of the chain expired on {date}',
  chain_not_ca: 'Certificate {position} of the chain is not a certificate authority',
  printable_ascii: 'This field must be printable ASCII without spaces',
  dns_key_name: 'This field must be a key name (letters, digits, ".", "_", "-")',
  dns_zone_id: 'This field must be a zone id (letters and digits)',
  aws_access_key_id: 'This field must be an AWS access key id',
  aws_hosted_zone_id: 'This field must be a hosted zone id (Z…)',
  aws_region: 'This field must be an AWS region (us-east-1)',
  acme_dns_username: 'This field must be an acme-dns user name',
  acme_dns_subdomain: 'This field must be an acme-dns subdomain',
  eab_pair: 'Give both the key id and the HMAC key of the external account binding, or neither',
  renew_not_acme: 'Only a domain whose certificate comes from a CA (certbot) can be renewed',

  // ---- Notifications
  invalid_http_url: 'This field must be an http or https URL',
  notification_address_refused:
    "This address is refused: notifications never go to the gateway's own addresses, loopback, link-local or cloud metadata addresses, or the tunnel network",
  notification_secret: 'This field must be {min} to {max} printable characters without spaces',
  printable_no_spaces: 'This field must be printable characters without spaces',
  password_needs_username: 'A password needs a username',
  field_not_for_kind: 'This field is not used by {kind} channels',
  at_least_one_address: 'This field must hold at least one address',

  // ---- Docker labels, traffic, configuration as code
  invalid_container_name: 'This field must be a Docker container name',
  invalid_label_key: 'This field must be http, tcp, http.NAME or tcp.NAME',
  invalid_digest: 'This field must be a SHA-256 digest in hex',
  not_one_line: 'This field must be one printable line',
  invalid_audit_action: 'This field must be an action such as service or service.update',
  invalid_service_list: 'This field must list services as http:12,tcp:3',
  no_node_named: 'No node is named {name}',

  // ---- Subnets of gateway nodes (checked against the gateway's host and the other nodes)
  network_unavailable:
    "This network is not available to this node: the gateway or another node uses addresses in it (ask the gateway's operator)",
  network_not_private:
    "A node may route private networks only ({networks}), each /{prefix} or narrower; ask the gateway's operator for others",
  network_this_host: 'This network must not overlap "this host" addresses (0.0.0.0/8)',
  network_loopback: 'This network must not overlap loopback (127.0.0.0/8)',
  network_link_local: 'This network must not overlap link-local addresses (169.254.0.0/16)',
  network_multicast: 'This network must not overlap multicast (224.0.0.0/4)',
  network_reserved: 'This network must not overlap reserved and broadcast addresses (240.0.0.0/4)',
  network_vpn_subnet: 'This network must not overlap the VPN subnet {subnet}',
  network_of_gateway_node: 'This network overlaps {other} of the gateway "{name}"',
  network_contains_node_endpoint: 'This network contains {address}, the address the node "{name}" connects from',
  network_host_route: 'This network overlaps {route}, a network the gateway host reaches directly (its own route)',
  network_contains_reached: 'This network contains {address}, {what}',

  // ---- The schemas' built-in checks (zod's own English, where a rule gives no text of its own)
  zod_unknown_key: 'Unrecognized key: "{key}"',
  zod_too_big_string: 'Too big: expected string to have <={max} characters',
  zod_too_big_array: 'Too big: expected array to have <={max} items',
  zod_too_small_string: 'Too small: expected string to have >={min} characters',
  zod_invalid_value: 'Invalid input: expected {expected}',
  zod_invalid_option: 'Invalid option: expected one of {options}',

  // ---- Accounts, sign-in and two-factor
  invalid_username: "This field may hold only letters, digits and '.', '_', '-', '@', '+'",
  last_owner: 'This is the last owner: make another account an owner first',
  own_account: 'Not your own account: ask another owner (your own settings are under Settings)',
  unknown_nodes: 'No node has the id {ids}',
  invite_invalid: 'This invite link is not valid: it was used, revoked or never existed. Ask an owner for a new one',
  invite_expired: 'This invite link has expired. Ask an owner for a new one',
  current_password_wrong: 'The current password is not correct',
  password_unchanged: 'The new password must differ from the current one',
  password_wrong: 'The password is not correct',
  code_wrong: 'The code is not correct',
  invalid_credentials: 'Invalid username or password',
  invalid_authentication_code: 'Invalid authentication code',
  sign_in_expired: 'The sign-in has expired, enter your password again',
  too_many_attempts: 'Too many failed sign-in attempts, try again later',
  sign_ins_busy: 'Too many sign-ins in progress, try again in a moment',
  account_disabled: 'This account is disabled: ask an owner of the gateway to enable it',
  authentication_required: 'Authentication required',
  session_invalid: 'Session expired or invalid, please sign in again',
  session_ended: 'Session ended',
  token_required: 'Access token required',
  invalid_token: 'Invalid token',
  token_revoked: 'Token revoked',
  token_expired: 'Token expired',

  // ---- Answers of any call
  validation_failed: 'Validation failed',
  not_found: 'Not found',
  access_token_not_found: 'Access token not found',
  account_not_found: 'Account not found',
  certificate_authority_not_found: 'Certificate authority not found',
  dns_provider_not_found: 'DNS provider not found',
  domain_not_found: 'Domain not found',
  identity_provider_not_found: 'Identity provider not found',
  invite_not_found: 'Invite not found',
  node_not_found: 'Node not found',
  channel_not_found: 'Notification channel not found',
  service_not_found: 'Service not found',
  share_link_not_found: 'Share link not found',
  visitor_session_not_found: 'Visitor session not found',
  invalid_json: 'The request body is not valid JSON',
  internal_error: 'Internal Server Error',
  database_unavailable:
    'The database does not answer: nothing was saved. The gateways go on serving what they serve; try again when it is back.',
  saved_not_applied: 'Saved, but the gateway could not apply it yet: {reason}',
  route_not_found: 'Route {method} {path} not found',

  // ---- A node's token refused (403): the operator decided (services decisions.ts, the agent's authentication)
  service_disabled_by_operator:
    "The gateway's operator disabled this service: only the operator can enable or delete it (in the console)",
  service_expired_by_operator:
    "The gateway's operator set this service's expiry, which has passed: only the operator can publish it again (in the console)",
  service_expiry_by_operator:
    "The gateway's operator gave this service an expiry: only the operator can delete it or change its expiry (in the console)",
  service_created_by_operator:
    "The gateway's operator created this service: only the operator can delete it (in the console); this node's token can disable it",
  node_disabled:
    'This node is disabled: the gateway refuses its access tokens until an operator connects it again (Connect in the console)',
  token_networks_not_allowed:
    "The gateway's operator has not allowed this node's access tokens to set its networks: the operator sets them, or allows this, in the node's form in the console",
} as const satisfies Record<string, string | readonly Template[]>;

export type MessageCode = keyof typeof messageTexts;

export const MESSAGE_CODES = Object.keys(messageTexts) as MessageCode[];

/** A message's code and the values it names; what the console needs to say it in another language. */
export interface DescribedMessage {
  code: MessageCode;
  params?: MessageParams;
}

// Values that are counts or numbers in every form: only digits match them, so `{max}` of `too_big` cannot swallow
// the words of `too_long`, and the console's plurals get numbers.
const NUMERIC = new Set(['min', 'max', 'count', 'port', 'low', 'high', 'limit', 'position', 'next', 'prefix']);

const PLACEHOLDER = /\{(\w+)\}/g;

interface Matcher {
  code: MessageCode;
  pattern: RegExp;
  names: string[];
  fixed: MessageParams;
  /** The template's own text without its placeholders: the longer, the more specific (tried first). */
  weight: number;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compile(code: MessageCode, template: Template): Matcher {
  const [text, fixed] = typeof template === 'string' ? [template, {}] : template;
  const names: string[] = [];
  let source = '';
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    names.push(name);
    source += escapeRegExp(text.slice(last, match.index)) + (NUMERIC.has(name) ? '(-?\\d+)' : '([\\s\\S]+?)');
    last = match.index + match[0].length;
  }
  source += escapeRegExp(text.slice(last));
  return { code, pattern: new RegExp(`^${source}$`), names, fixed, weight: text.replace(PLACEHOLDER, '').length };
}

const templatesOf = (code: MessageCode): readonly Template[] => {
  const entry: string | readonly Template[] = messageTexts[code];
  return typeof entry === 'string' ? [entry] : entry;
};

let matchers: Matcher[] | null = null;
function allMatchers(): Matcher[] {
  matchers ??= MESSAGE_CODES.flatMap((code) => templatesOf(code).map((template) => compile(code, template))).sort(
    (a, b) => b.weight - a.weight,
  );
  return matchers;
}

/**
 * A list field's message about one of its entries names the entry before the reason (`10.1.0.0/24: This network …`,
 * a gateway node's subnets): the reason's code and values, the entry as `params.entry`, which a translation puts
 * before the translated reason (the console's `ui.listEntry`).
 */
const LIST_ENTRY = /^(\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}): ([\s\S]+)$/;

/** The code of an English message and its values; null for a text without one (the console then shows it as is). */
export function describeMessage(message: string): DescribedMessage | null {
  const listEntry = LIST_ENTRY.exec(message);
  const reason = listEntry ? describeMessage(listEntry[2] ?? '') : null;
  if (listEntry && reason) return { code: reason.code, params: { ...reason.params, entry: listEntry[1] ?? '' } };
  for (const { code, pattern, names, fixed } of allMatchers()) {
    const found = pattern.exec(message);
    if (!found) continue;
    const params: MessageParams = { ...fixed };
    names.forEach((name, index) => {
      const value = found[index + 1] ?? '';
      params[name] = NUMERIC.has(name) ? Number(value) : value;
    });
    return Object.keys(params).length > 0 ? { code, params } : { code };
  }
  return null;
}

/**
 * The English text of `code` with `params` (the form whose fixed values match, else the general one), after
 * `params.entry` when a list entry is named.
 */
export function messageText(code: MessageCode, params: MessageParams = {}): string {
  if (typeof params.entry === 'string') {
    const { entry, ...rest } = params;
    return `${entry}: ${messageText(code, rest)}`;
  }
  const templates = templatesOf(code);
  const chosen =
    templates.find(
      (template) =>
        typeof template !== 'string' && Object.entries(template[1]).every(([name, value]) => params[name] === value),
    ) ?? templates[0];
  const text = typeof chosen === 'string' ? chosen : (chosen?.[0] ?? '');
  return text.replace(PLACEHOLDER, (whole, name: string) => (name in params ? String(params[name]) : whole));
}
