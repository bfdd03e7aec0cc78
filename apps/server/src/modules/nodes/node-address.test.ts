import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { chooseAddress, cidrsOverlap } from './node-address.js';

describe('chooseAddress', () => {
  it('allocates the lowest free host address when none is requested', () => {
    expect(chooseAddress('10.44.0.0/16', new Set(['10.44.0.1', '10.44.0.2']), null)).toBe('10.44.0.3');
  });

  it('reports a full subnet on the address field', () => {
    const used = new Set(['10.9.0.1', '10.9.0.2']);
    let error: unknown;
    try {
      chooseAddress('10.9.0.0/30', used, undefined);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).fields).toEqual([
      { field: 'address', message: expect.stringMatching(/10\.9\.0\.0\/30 is full/) },
    ]);
  });
});

describe('cidrsOverlap', () => {
  it.each([
    ['192.168.0.0/16', '192.168.4.0/24', true],
    ['192.168.4.0/24', '192.168.0.0/16', true],
    ['192.168.4.7/24', '192.168.4.0/24', true],
    ['192.168.4.0/24', '192.168.5.0/24', false],
    ['10.0.0.0/8', '172.16.0.0/12', false],
  ])('%s and %s → %s', (a, b, expected) => {
    expect(cidrsOverlap(a, b)).toBe(expected);
  });
});
