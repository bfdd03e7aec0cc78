// The spec's default validation messages (the spec's "Validation rules"), word for word. Server and console both render
// these, so a 422 from the server reads exactly like the console's own client-side check.
export const messages = {
  required: 'This field is required',
  email: 'This field must be a valid email',
  uri: 'This field must be a valid uri',
  domain: 'This field must contain a valid domain name',
  number: 'This field must be a number',
  integer: 'This field must be an integer',
  empty: 'This field is not allowed to be empty',
  array: 'This field must be an array',
} as const;

export const minLengthMessage = (limit: number): string => `This field must be at least ${limit} characters long`;
export const maxLengthMessage = (limit: number): string =>
  `This field must be less than or equal to ${limit} characters long`;
export const minMessage = (limit: number | string): string =>
  `This field must be greater than or equal to ${String(limit)}`;
export const maxMessage = (limit: number | string): string =>
  `This field must be less than or equal to ${String(limit)}`;
/** The spec writes 'This field must be one of ...'; the dots stand for the allowed values. */
export const oneOfMessage = (values: readonly string[]): string => `This field must be one of ${values.join(', ')}`;

// Messages for rules the spec states without giving a text (documented in docs/api.md).
export const ruleMessages = {
  ipv4: 'This field must be a valid IPv4 address',
  ipOrCidr: 'This field must be a valid IPv4 address, optionally with a CIDR',
  cidr: 'This field must be a valid IP address with a CIDR',
  host: 'This field must be a valid IP address or host name',
  path: "This field must start with '/' and contain only letters, digits, '-', '.', '_', '~' and '/'",
  /** A segment ending in '.': Windows backends drop trailing dots, so the gateway could not tell such paths apart. */
  pathDotEnd: "No part of this path may end with '.'",
  boolean: 'This field must be a boolean',
  string: 'This field must be a string',
  /** A line break or other control character in a name would split the lines of logs and audit exports. */
  controlCharacters: 'This field must not contain line breaks or other control characters',
  date: 'This field must be a valid date',
  pastDate: 'This field must not be earlier than now',
  /** An expiry is capped like `ttl` (limits.serviceTtlMaxSeconds). */
  expiryTooFar: 'This field must be at most 366 days from now',
  expiryTwice: 'Give either expiresAt or ttl, not both',
  gatewayNetworkNotAllowed: 'This field must be empty unless the node is a gateway',
  gatewayNetworkNotFirst: 'This field must be the first of gatewayNetworks',
  /** Only a gateway node routes subnets, so only its tokens can be allowed to set them. */
  tokenNetworksNotGateway: 'This field must be false unless the node is a gateway',
  domainOrPath: 'Either a domain or a path is required',
  /** The console's own host name (POSTERN_PUBLIC_HOST) is never a service's or a domain entry's. */
  consoleHost: "This field must not be the console's host name",
  /** A node's token names a domain that is the admin's or another node's; says nothing about which. */
  /** An account limited to some nodes names a domain another node uses or owns (docs/api.md "Node scope"). */
  domainOfOtherNodes:
    'This domain is not yours to use: use a domain your nodes already use, or a new one (an owner or admin can use any)',
  domainNotYours:
    "This domain is not assigned to your node: use a domain of your own (a new one becomes your node's) or ask the gateway's operator to assign it",
  /** A node's token publishes a web service without a domain (the CLI gives the same guidance before asking). */
  domainRequiredForNode:
    "A node publishes web services on a domain of its own: pass --domain NAME (a domain that does not exist yet becomes your node's)",
  ownerNotFound: 'This node does not exist',
  ownerIsLocal: 'The local node cannot own domains',
} as const;

/** A service path equal to or below a path the gateway keeps for itself. */
export function reservedPathMessage(prefix: string): string {
  const why: Record<string, string> = {
    '/.well-known/acme-challenge': 'certificate validation (ACME) uses it',
    '/_postern': "it is the gateway's internal path",
    '/api':
      "services without a domain share the console's host name, whose session belongs to /api (give the service a domain to use this path)",
  };
  const reason = why[prefix] ?? 'the gateway reserves it';
  return `This field must not be ${prefix} or a path below it: ${reason}`;
}

/** An IPv4 CIDR whose bits after the prefix are not zero: name the network the operator probably meant. */
export function hostBitsMessage(value: string, network: string): string {
  return `This field must be a network address: ${value} has host bits set (did you mean ${network}?)`;
}

/** Two subnets of one gateway node that overlap (WireGuard would route the shared part to one of them only). */
export function gatewayNetworksOverlapMessage(network: string, other: string): string {
  return `${network} overlaps ${other}, another network of this node`;
}
