import { createHmac } from 'node:crypto';
import {
  NOTIFICATION_SIGNATURE_HEADER,
  type NotificationChannelKind,
  type NotificationPayload,
  type SmtpSecurity,
} from '@postern/contract';
import { sendEmail } from './email.js';
import { DeliveryError, expectSuccess, postGuarded, type Outbound } from './http-post.js';

// One message to one channel, in the channel's own shape. Every sender resolves with a short sentence of what the
// far side said, or throws with why not (DeliveryError, or a network error describeFailure() words).

/** A channel as the senders need it: its kind, the settings and the decrypted secrets. */
export interface ChannelConfig {
  kind: NotificationChannelKind;
  name: string;
  url?: string | undefined;
  signingSecret?: string | undefined;
  token?: string | undefined;
  email?:
    | {
        host: string;
        port: number;
        security: SmtpSecurity;
        username: string | null;
        password: string | undefined;
        from: string;
        to: string[];
      }
    | undefined;
}

export interface SendContext extends Outbound {
  /** The delivery's id (the webhook's X-Postern-Delivery header); 0 for a test. */
  deliveryId: number;
  /** Unix seconds, signed into the webhook's signature. */
  nowSeconds: number;
  /** The name the gateway greets an SMTP server with (POSTERN_PUBLIC_HOST). */
  heloName: string;
}

/** The generic webhook's signature: HMAC-SHA-256 over `<t>.<body>` (docs/api.md "Verifying a webhook"). */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secret)
    .update(`${String(timestamp)}.${body}`)
    .digest('hex');
  return `t=${String(timestamp)},v1=${mac}`;
}

const DISCORD_MAX = 2000;
const CHAT_MAX = 16_000;

/** The text chat channels show: the title in bold, then the lines. */
function chatText(payload: NotificationPayload, bold: (text: string) => string, max: number): string {
  const text = `${bold(payload.title)}\n${payload.text}`;
  return text.length <= max ? text : `${text.slice(0, max - 2)} …`;
}

/** ntfy takes headers of printable ASCII; anything else goes as RFC 2047 (ntfy decodes it). */
function asciiHeader(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

const NTFY_PRIORITY: Record<NotificationPayload['severity'], string> = {
  critical: '5',
  warning: '4',
  resolved: '3',
  info: '3',
};
const NTFY_TAGS: Record<NotificationPayload['severity'], string> = {
  critical: 'rotating_light',
  warning: 'warning',
  resolved: 'white_check_mark',
  info: 'information_source',
};

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new DeliveryError(`the channel has no ${what}`);
  return value;
}

export async function sendToChannel(
  channel: ChannelConfig,
  payload: NotificationPayload,
  context: SendContext,
): Promise<string> {
  if (channel.kind === 'email') return await sendEmail(need(channel.email, 'SMTP settings'), payload, context);
  const url = need(channel.url, 'URL');
  const host = new URL(url).host;
  const json = { 'content-type': 'application/json' };
  let answer;
  switch (channel.kind) {
    case 'webhook': {
      const body = JSON.stringify(payload);
      answer = await postGuarded(
        url,
        body,
        {
          ...json,
          'x-postern-event': payload.type,
          'x-postern-delivery': String(context.deliveryId),
          [NOTIFICATION_SIGNATURE_HEADER.toLowerCase()]: signWebhook(
            need(channel.signingSecret, 'signing secret'),
            context.nowSeconds,
            body,
          ),
        },
        context,
      );
      break;
    }
    case 'slack':
      answer = await postGuarded(
        url,
        JSON.stringify({ text: chatText(payload, (t) => `*${t}*`, CHAT_MAX) }),
        json,
        context,
      );
      break;
    case 'mattermost':
      answer = await postGuarded(
        url,
        JSON.stringify({ text: chatText(payload, (t) => `**${t}**`, CHAT_MAX), username: 'Postern' }),
        json,
        context,
      );
      break;
    case 'discord':
      answer = await postGuarded(
        url,
        JSON.stringify({
          content: chatText(payload, (t) => `**${t}**`, DISCORD_MAX),
          allowed_mentions: { parse: [] },
        }),
        json,
        context,
      );
      break;
    case 'ntfy':
      answer = await postGuarded(
        url,
        payload.text,
        {
          'content-type': 'text/plain; charset=utf-8',
          title: asciiHeader(payload.title),
          priority: NTFY_PRIORITY[payload.severity],
          tags: NTFY_TAGS[payload.severity],
          ...(channel.token ? { authorization: `Bearer ${channel.token}` } : {}),
        },
        context,
      );
      break;
  }
  expectSuccess(answer, host);
  return `${host} answered ${String(answer.status)}`;
}
