import {
  maxLengthMessage,
  MESSAGE_CODES,
  messageText,
  messageTexts,
  messages,
  type MessageParams,
} from '@postern/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { collectErrors } from '../lib/use-zod-form';
import { fieldErrorText, translatedMessage } from './error-text';
import { activateLanguage, loadMoreTexts, t, type MessageId } from './i18n';

afterEach(() => activateLanguage('en'));

/** A value for each placeholder of an English text: a number where the message counts. */
function sampleParams(text: string, count: number): MessageParams {
  const params: MessageParams = {};
  for (const [, name = ''] of text.matchAll(/\{(\w+)\}/g)) {
    params[name] = /^(min|max|count|port|low|high|limit|position|next|prefix)$/.test(name) ? count : `sample-${name}`;
  }
  return params;
}

describe('server and form messages in the operator’s language', () => {
  it('shows the English message while the texts of its code are not there yet, never an id', async () => {
    // A fresh console that has fetched only the first page's texts (the sign-in page).
    vi.resetModules();
    const fresh = await import('./i18n');
    const { translatedMessage: freshText } = await import('./error-text');
    await fresh.activateLanguage('de');
    expect(fresh.t('nav.home')).toBe('Startseite');
    expect(freshText(maxLengthMessage(63), 'too_long', { max: 63 })).toBe(maxLengthMessage(63));
  });

  it('says a known code in the language with its values; an unknown code or none in the English message', async () => {
    await activateLanguage('de');
    await loadMoreTexts();
    expect(translatedMessage(maxLengthMessage(63), 'too_long', { max: 63 })).toBe(
      'Dieses Feld darf höchstens 63 Zeichen lang sein',
    );
    expect(
      fieldErrorText({
        field: 'port',
        message: 'Port 80/tcp is already used',
        code: 'port_in_use',
        params: { port: 80, proto: 'tcp' },
      }),
    ).toBe('Port 80/tcp ist bereits belegt');
    expect(translatedMessage('A message of a newer gateway', 'made_up_code', {})).toBe('A message of a newer gateway');
    expect(translatedMessage('A message without a code', null)).toBe('A message without a code');
    await activateLanguage('ja');
    expect(translatedMessage(messages.required, 'required')).toBe('この項目は必須です');
  });

  it("says a gateway node's subnet list entry with the subnet before the reason in the language", async () => {
    const message = '10.9.0.0/24: This network must not overlap the VPN subnet 10.8.0.0/24';
    const params = { subnet: '10.8.0.0/24', entry: '10.9.0.0/24' };
    expect(translatedMessage(message, 'network_vpn_subnet', params)).toBe(message);
    await activateLanguage('fr');
    await loadMoreTexts();
    expect(translatedMessage(message, 'network_vpn_subnet', params)).toBe(
      '10.9.0.0/24 : Ce réseau ne doit pas chevaucher le sous-réseau VPN 10.8.0.0/24',
    );
    await activateLanguage('ja');
    expect(translatedMessage(message, 'network_vpn_subnet', params)).toBe(
      '10.9.0.0/24：このネットワークは VPN サブネット 10.8.0.0/24 と重なってはいけません',
    );
  });

  it('checks a form in the language (the same schemas as the server, the same codes)', async () => {
    await activateLanguage('fr');
    await loadMoreTexts();
    const schema = z.object({ name: z.string({ error: () => messages.required }).max(5, maxLengthMessage(5)) });
    expect(collectErrors(schema, {})).toEqual({ name: 'Ce champ est obligatoire' });
    expect(collectErrors(schema, { name: 'far too long' })).toEqual({
      name: 'Ce champ doit comporter au plus 5 caractères',
    });
    await activateLanguage('en');
    expect(collectErrors(schema, { name: 'far too long' })).toEqual({ name: maxLengthMessage(5) });
  });

  it('has an English text for every code equal to the server’s English message', async () => {
    await activateLanguage('en');
    await loadMoreTexts();
    for (const code of MESSAGE_CODES) {
      const entry: string | readonly (string | readonly [string, MessageParams])[] = messageTexts[code];
      const first = typeof entry === 'string' ? entry : entry[0];
      const text = typeof first === 'string' ? first : (first?.[0] ?? '');
      for (const count of [1, 7]) {
        const params = sampleParams(text, count);
        expect(t(`error.${code}` as MessageId, params), code).toBe(messageText(code, params));
      }
    }
  });
});
