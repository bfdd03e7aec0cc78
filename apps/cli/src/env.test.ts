import { describe, expect, it } from 'vitest';
import { readEnv } from './env.js';

describe('readEnv', () => {
  it('reads the POSTERN_ variables and PATH, ignoring empty ones', () => {
    expect(
      readEnv({
        POSTERN_URL: ' https://gw.example.com ',
        POSTERN_TOKEN: '',
        POSTERN_CONFIG_DIR: '/data/postern',
        POSTERN_PIN: ' sha256:abc ',
        PATH: '/opt/bin',
        POSTERN_REFRESH_SECONDS: '5',
      }),
    ).toEqual({
      url: 'https://gw.example.com',
      token: undefined,
      configDir: '/data/postern',
      pin: 'sha256:abc',
      path: '/opt/bin',
      refreshSeconds: 5,
    });
    expect(readEnv({ POSTERN_REFRESH_SECONDS: 'soon' }).refreshSeconds).toBeUndefined();
  });
});
