import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import type { NotificationPayload, SmtpSecurity } from '@postern/contract';
import { resolveAllowed } from '../address-guard.js';
import type { Outbound } from './http-post.js';

// E-mail over SMTP with nodemailer: STARTTLS required (`starttls`, usually port 587) or TLS from the first byte
// (`tls`, usually 465); the server's certificate is always verified (a private CA: NODE_EXTRA_CA_CERTS). The host is
// resolved and checked by the address guard first and nodemailer connects to that address, with the name kept for
// the certificate check (servername), so no DNS answer given later is used.

export interface SmtpSettings {
  host: string;
  port: number;
  security: SmtpSecurity;
  username: string | null;
  password: string | undefined;
  from: string;
  to: string[];
}

const DEFAULT_PORT: Record<SmtpSecurity, number> = { starttls: 587, tls: 465 };

export async function sendEmail(
  smtp: SmtpSettings,
  payload: NotificationPayload,
  context: Outbound & { heloName: string },
): Promise<string> {
  const [address] = await resolveAllowed(smtp.host, context.policy, context.resolve);
  const transport = nodemailer.createTransport({
    host: address,
    port: smtp.port || DEFAULT_PORT[smtp.security],
    secure: smtp.security === 'tls',
    requireTLS: smtp.security === 'starttls',
    ...(isIP(smtp.host) ? {} : { servername: smtp.host }),
    tls: {
      minVersion: 'TLSv1.2',
      ...(isIP(smtp.host) ? {} : { servername: smtp.host }),
      ...(context.ca ? { ca: context.ca } : {}),
    },
    ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
    name: context.heloName,
    connectionTimeout: context.timeoutMs,
    greetingTimeout: context.timeoutMs,
    socketTimeout: context.timeoutMs,
    dnsTimeout: context.timeoutMs,
  });
  try {
    const info = await transport.sendMail({
      from: smtp.from,
      to: smtp.to,
      subject: `[Postern] ${payload.title}`,
      text: `${payload.text}\n\n-- \n${payload.consoleUrl} · gateway ${payload.gateway}\n`,
      headers: { 'X-Postern-Event': payload.type, 'X-Postern-Id': payload.id },
    });
    return `${smtp.host} accepted the message (${info.response.slice(0, 120)})`;
  } finally {
    transport.close();
  }
}
