import { describe, expect, it } from 'vitest';
import { createFakeDataPlane, EMPTY_DESIRED_STATE } from './fakes.js';
import type { DesiredState } from './types.js';

describe('createFakeDataPlane', () => {
  it('records applies, the state read, and a forced rejection', async () => {
    let state: DesiredState = EMPTY_DESIRED_STATE;
    const dp = createFakeDataPlane({ loadDesiredState: () => state });
    await dp.start();
    expect(dp.applyCount).toBe(1);

    state = { ...state, domains: [{ domainId: 1, domain: 'a.example.com', ssl: 'self-signed' }] };
    expect(await dp.apply()).toEqual({ ok: true, generation: 2 });
    expect(dp.lastState?.domains).toHaveLength(1);
    expect(dp.certificates.info('a.example.com')?.state).toBe('self-signed');

    dp.failNextApply('nginx: [emerg] duplicate location');
    expect(await dp.apply()).toEqual({ ok: false, message: 'nginx: [emerg] duplicate location' });
    expect(await dp.apply()).toEqual({ ok: true, generation: 2 });
    await dp.stop();
  });

  it('lets a test drive node status and log lines', () => {
    const dp = createFakeDataPlane();
    const changed: string[][] = [];
    dp.status.onChange((keys) => changed.push(keys));
    dp.status.setStatus('PUB', { status: 'online', clientIp: '203.0.113.5', latestHandshakeTimestamp: null, transferRx: 1, transferTx: 2 });
    expect(changed).toEqual([['PUB']]);
    expect(dp.status.get('PUB')?.status).toBe('online');

    const got: string[] = [];
    dp.logs.subscribe({ domain: 'a.example.com' }, (lines) => got.push(...lines));
    dp.pushLogLines([{ domain: 'a.example.com', type: 'http', serviceId: 3, text: '[INFO] GET / 200' }]);
    expect(got).toEqual(['[INFO] GET / 200']);
  });
});
