import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { accessMessages } from './access.js';
import { accountMessages } from './accounts.js';
import { certificateMessages } from './certificate-messages.js';
import { notificationLimits, notificationMessages } from './notifications.js';
import { toFieldErrors, toValidationError, VALIDATION_FAILED_MESSAGE } from './envelopes.js';
import { requiredText } from './fields.js';
import {
  describeMessage,
  MESSAGE_CODES,
  messageText,
  messageTexts,
  type MessageCode,
  type MessageParams,
} from './message-codes.js';
import {
  gatewayNetworksOverlapMessage,
  hostBitsMessage,
  maxLengthMessage,
  maxMessage,
  messages,
  minLengthMessage,
  minMessage,
  oneOfMessage,
  reservedPathMessage,
  ruleMessages,
} from './messages.js';

// The table of message codes (docs/api.md "Message codes"): each code's English text is today's message word for
// word, and a message finds its code and values back, so the API's English answers stay as they were while the
// console says them in the operator's language.

/** Today's messages, as the contract builds them, with the code and values each must carry. */
const todays: [message: string, code: MessageCode, params?: MessageParams][] = [
  [messages.required, 'required'],
  [messages.email, 'invalid_email'],
  [messages.uri, 'invalid_uri'],
  [messages.domain, 'invalid_domain'],
  [messages.number, 'not_a_number'],
  [messages.integer, 'not_an_integer'],
  [messages.empty, 'empty'],
  [messages.array, 'not_an_array'],
  [minLengthMessage(12), 'too_short', { min: 12 }],
  [maxLengthMessage(63), 'too_long', { max: 63 }],
  [minMessage(1), 'too_small', { min: 1 }],
  [maxMessage(65535), 'too_big', { max: 65535 }],
  [maxMessage(Number.MAX_SAFE_INTEGER), 'too_big', { max: Number.MAX_SAFE_INTEGER }],
  [oneOfMessage(['tcp', 'udp']), 'not_one_of', { values: 'tcp, udp' }],
  [ruleMessages.ipv4, 'invalid_ipv4'],
  [ruleMessages.ipOrCidr, 'invalid_ip_or_cidr'],
  [ruleMessages.cidr, 'invalid_cidr'],
  [ruleMessages.host, 'invalid_host'],
  [ruleMessages.path, 'invalid_path'],
  [ruleMessages.pathDotEnd, 'path_dot_end'],
  [ruleMessages.boolean, 'not_a_boolean'],
  [ruleMessages.string, 'not_a_string'],
  [ruleMessages.controlCharacters, 'control_characters'],
  [ruleMessages.date, 'invalid_date'],
  [ruleMessages.pastDate, 'date_in_past'],
  [ruleMessages.expiryTooFar, 'expiry_too_far'],
  [ruleMessages.expiryTwice, 'expiry_twice'],
  [ruleMessages.gatewayNetworkNotAllowed, 'gateway_network_not_allowed'],
  [ruleMessages.gatewayNetworkNotFirst, 'gateway_network_not_first'],
  [ruleMessages.tokenNetworksNotGateway, 'token_networks_not_gateway'],
  [ruleMessages.domainOrPath, 'domain_or_path'],
  [ruleMessages.consoleHost, 'console_host'],
  [ruleMessages.domainOfOtherNodes, 'domain_of_other_nodes'],
  [ruleMessages.domainNotYours, 'domain_not_yours'],
  [ruleMessages.domainRequiredForNode, 'domain_required_for_node'],
  [ruleMessages.ownerNotFound, 'owner_unknown'],
  [ruleMessages.ownerIsLocal, 'owner_is_local'],
  [reservedPathMessage('/.well-known/acme-challenge'), 'reserved_path_acme'],
  [reservedPathMessage('/_postern'), 'reserved_path_internal'],
  [reservedPathMessage('/api'), 'reserved_path_api'],
  [reservedPathMessage('/other'), 'reserved_path', { path: '/other' }],
  [hostBitsMessage('10.0.0.5/8', '10.0.0.0/8'), 'host_bits', { value: '10.0.0.5/8', network: '10.0.0.0/8' }],
  [
    gatewayNetworksOverlapMessage('10.1.0.0/16', '10.1.2.0/24'),
    'networks_overlap',
    { network: '10.1.0.0/16', other: '10.1.2.0/24' },
  ],
  // A gateway node's subnet list names the entry before the reason (params.entry).
  [
    `10.1.0.0/24: ${gatewayNetworksOverlapMessage('10.1.0.0/16', '10.1.0.0/24')}`,
    'networks_overlap',
    { network: '10.1.0.0/16', other: '10.1.0.0/24', entry: '10.1.0.0/24' },
  ],
  [
    '10.9.0.0/24: This network must not overlap the VPN subnet 10.8.0.0/24',
    'network_vpn_subnet',
    { subnet: '10.8.0.0/24', entry: '10.9.0.0/24' },
  ],
  [accessMessages.noWayIn, 'access_no_way_in'],
  [accessMessages.noAllowList, 'access_no_allow_list'],
  [accessMessages.needsDomain, 'access_needs_domain'],
  [accessMessages.providerNotFound, 'identity_provider_unknown'],
  [accessMessages.providerInUse('Corp', 1), 'identity_provider_in_use', { name: 'Corp', count: 1 }],
  [accessMessages.providerInUse('Corp', 3), 'identity_provider_in_use', { name: 'Corp', count: 3 }],
  [accessMessages.inheritHasNoFields, 'access_inherit_has_no_fields'],
  [accessMessages.setByOperator, 'access_set_by_operator'],
  [accessMessages.shareLinksOff, 'share_links_off'],
  [accessMessages.group, 'invalid_group'],
  [accessMessages.issuer, 'invalid_issuer'],
  [accessMessages.claim, 'invalid_claim'],
  [accessMessages.scope, 'invalid_scope'],
  [certificateMessages.wildcardNeedsDns, 'wildcard_needs_dns'],
  [certificateMessages.dnsNeedsProvider, 'dns_needs_provider'],
  [certificateMessages.providerNotFound, 'dns_provider_unknown'],
  [certificateMessages.caNotFound, 'certificate_authority_unknown'],
  [certificateMessages.providerInUse('Cloud', 1), 'dns_provider_in_use', { name: 'Cloud', count: 1 }],
  [certificateMessages.providerInUse('Cloud', 2), 'dns_provider_in_use', { name: 'Cloud', count: 2 }],
  [certificateMessages.caInUse('ZeroSSL', 1), 'certificate_authority_in_use', { name: 'ZeroSSL', count: 1 }],
  [certificateMessages.caInUse('ZeroSSL', 5), 'certificate_authority_in_use', { name: 'ZeroSSL', count: 5 }],
  [certificateMessages.uploadFirst, 'upload_certificate_first'],
  [certificateMessages.certificatePem, 'certificate_pem'],
  [certificateMessages.privateKeyPem, 'private_key_pem'],
  [certificateMessages.keyMismatch, 'key_mismatch'],
  [certificateMessages.eabPair, 'eab_pair'],
  [
    certificateMessages.namesDoNotCover('shop.example.test', ['a.example.test', '*.b.example.test']),
    'certificate_names_mismatch',
    { names: 'a.example.test, *.b.example.test', domain: 'shop.example.test' },
  ],
  [
    certificateMessages.namesDoNotCover('shop.example.test', []),
    'certificate_no_names',
    { domain: 'shop.example.test' },
  ],
  [certificateMessages.expired('2026-11-26'), 'certificate_expired', { date: '2026-11-26' }],
  [certificateMessages.notYetValid('2026-12-07'), 'certificate_not_yet_valid', { date: '2026-12-07' }],
  [certificateMessages.chainOrder(0), 'chain_order', { position: 1, next: 2 }],
  [certificateMessages.chainSignature(1), 'chain_signature', { position: 2, next: 3 }],
  [certificateMessages.chainExpired(1, '2026-01-02'), 'chain_expired', { position: 2, date: '2026-01-02' }],
  [certificateMessages.notCertificateAuthority(0), 'chain_not_ca', { position: 2 }],
  [notificationMessages.url, 'invalid_http_url'],
  [notificationMessages.localUrl, 'notification_address_refused'],
  [
    notificationMessages.secret,
    'notification_secret',
    { min: notificationLimits.secretMin, max: notificationLimits.secretMax },
  ],
  [notificationMessages.token, 'printable_no_spaces'],
  [notificationMessages.passwordWithoutUser, 'password_needs_username'],
  [notificationMessages.notForKind('slack'), 'field_not_for_kind', { kind: 'slack' }],
  [notificationMessages.nameTaken('ops'), 'channel_name_taken', { name: 'ops' }],
  [certificateMessages.renewNotAcme, 'renew_not_acme'],
  [accountMessages.username, 'invalid_username'],
  [accountMessages.usernameTaken('alice'), 'username_taken', { username: 'alice' }],
  [accountMessages.lastOwner, 'last_owner'],
  [accountMessages.ownAccount, 'own_account'],
  [accountMessages.inviteInvalid, 'invite_invalid'],
  [accountMessages.inviteExpired, 'invite_expired'],
  [accountMessages.unknownNodes([4, 9]), 'unknown_nodes', { ids: '4, 9' }],
  [VALIDATION_FAILED_MESSAGE, 'validation_failed'],
];

/** A value for each placeholder: digits where the template wants a number, a word otherwise. */
function sampleParams(text: string): MessageParams {
  const params: MessageParams = {};
  for (const [, name = ''] of text.matchAll(/\{(\w+)\}/g)) {
    params[name] = /^(min|max|count|port|low|high|limit|position|next|prefix)$/.test(name) ? 7 : `sample-${name}`;
  }
  return params;
}

describe('message codes', () => {
  it.each(todays)('%s → %s', (message, code, params) => {
    expect(describeMessage(message)).toEqual(params ? { code, params } : { code });
    expect(messageText(code, params)).toBe(message);
  });

  it('gives a list entry no code when its reason has none', () => {
    expect(describeMessage('10.1.0.0/24: a reason without a code')).toBeNull();
  });

  it('codes are snake_case and each English form finds its own code back', () => {
    for (const code of MESSAGE_CODES) {
      expect(code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
      const entry: string | readonly (string | readonly [string, MessageParams])[] = messageTexts[code];
      for (const template of typeof entry === 'string' ? [entry] : entry) {
        const [text, fixed] = typeof template === 'string' ? [template, {}] : template;
        const params = { ...sampleParams(text), ...fixed };
        const rendered = messageText(code, params);
        expect(describeMessage(rendered), rendered).toEqual(
          Object.keys(params).length > 0 ? { code, params } : { code },
        );
      }
    }
  });

  it('a text without a code has none (the console then shows the English text)', () => {
    expect(describeMessage('Something no table knows')).toBeNull();
    // Digits only where a number is meant: words after a limit are not a limit.
    expect(describeMessage('This field must be less than or equal to many')).toBeNull();
  });

  it("a zod failure's field errors carry codes and values, the 422 body its message code", () => {
    const schema = z.object({ name: requiredText(63), note: requiredText(5) });
    const result = schema.safeParse({ note: 'far too long' });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(toFieldErrors(result.error)).toEqual([
      { field: 'name', message: messages.required, code: 'required' },
      { field: 'note', message: maxLengthMessage(5), code: 'too_long', params: { max: 5 } },
    ]);
    expect(toValidationError(result.error)).toMatchObject({
      message: 'Validation failed',
      code: 'validation',
      messageCode: 'validation_failed',
    });
  });
});
