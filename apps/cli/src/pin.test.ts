import { describe, expect, it } from 'vitest';
import { parsePin } from './pin.js';

const BASE64 = 'sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';
const HEX = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('parsePin', () => {
  it('keeps the base64 form and turns 64 hex digits (with or without colons) into it', () => {
    expect(parsePin(` ${BASE64} `)).toBe(BASE64);
    expect(parsePin(`sha256:${HEX}`)).toBe(BASE64);
    expect(parsePin(`sha256:${HEX.toUpperCase().match(/../g)?.join(':') ?? ''}`)).toBe(BASE64);
  });

  it.each([
    '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
    'sha1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
    'sha256:abc',
    `sha256:${HEX}00`,
    'sha256://47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
  ])('refuses %s with the expected format', (text) => {
    expect(() => parsePin(text)).toThrow(
      /^Invalid pin .*: expected sha256: and the base64 \(or hex\) SHA-256 of the certificate's public key/,
    );
  });
});
