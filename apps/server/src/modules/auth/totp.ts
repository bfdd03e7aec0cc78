import { createHmac, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';

// TOTP (RFC 6238) as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. A code is accepted one
// step either side of now (clock drift), and only for a step later than the last one accepted (no replay).

const ISSUER = 'Postern';
const PERIOD_SECONDS = 30;
const DRIFT_STEPS = 1;
/** 160 bits, RFC 4226's recommended secret length. */
const SECRET_BYTES = 20;

export const RECOVERY_CODE_COUNT = 10;
/** 80 random bits each (16 base32 characters): beyond an offline search even through a fast hash. */
const RECOVERY_CODE_BYTES = 10;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export const newTotpSecret = (): string => new Secret({ size: SECRET_BYTES }).base32;

const totpOf = (secret: string, username: string): TOTP =>
  new TOTP({
    issuer: ISSUER,
    label: username,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });

export const otpauthUri = (secret: string, username: string): string => totpOf(secret, username).toString();

/** The QR code of the otpauth URI as an SVG data URL: made here, so the console's bundle carries no QR encoder. */
export async function qrCodeDataUrl(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** What the operator typed, as one of the two kinds of code (spaces and dashes are ignored), or null. */
export function classifyCode(
  input: string,
): { kind: 'totp'; code: string } | { kind: 'recovery'; code: string } | null {
  const compact = input.replace(/[\s-]/g, '').toUpperCase();
  if (/^\d{6}$/.test(compact)) return { kind: 'totp', code: compact };
  if (/^[A-Z2-7]{16}$/.test(compact)) return { kind: 'recovery', code: compact };
  return null;
}

/** The time step `code` belongs to (within the drift window around `nowMs`), or null when it matches none. */
export function matchTotpStep(secret: string, code: string, nowMs: number): number | null {
  const delta = totpOf(secret, 'check').validate({ token: code, timestamp: nowMs, window: DRIFT_STEPS });
  return delta === null ? null : TOTP.counter({ period: PERIOD_SECONDS, timestamp: nowMs }) + delta;
}

/** New recovery codes as shown to the operator: XXXX-XXXX-XXXX-XXXX. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const bytes = randomBytes(RECOVERY_CODE_BYTES);
    let bits = 0;
    let value = 0;
    let text = '';
    for (const byte of bytes) {
      value = (value << 8) | byte;
      bits += 8;
      while (bits >= 5) {
        text += BASE32.charAt((value >>> (bits - 5)) & 31);
        bits -= 5;
      }
    }
    return text.match(/.{4}/g)?.join('-') ?? text;
  });
}

/**
 * Stored form of a recovery code: HMAC-SHA-256 under a key derived from the gateway's secret key. 80 random bits
 * make a slow hash (argon2) unnecessary, as for access tokens; the key means a copy of the database alone is not
 * even enough to test guesses.
 */
export const hashRecoveryCode = (key: Uint8Array, code: string): string =>
  createHmac('sha256', key).update(code.replace(/[\s-]/g, '').toUpperCase()).digest('hex');
