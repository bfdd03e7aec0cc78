import type { Attention } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { countAttention, describeCertificateProblem, isGatewayInUse } from './home-state';

const empty: Attention = {
  totals: { nodes: 0, domains: 0, httpServices: 0, tcpServices: 0 },
  offlineNodes: { total: 0, items: [] },
  disconnectedNodeIds: [],
  backendsDown: { total: 0, items: [] },
  certificates: { total: 0, items: [] },
  setAside: { total: 0, items: [] },
  drift: null,
};

describe('the home page', () => {
  it('onboards while the gateway holds nothing, and shows the overview once anything exists', () => {
    expect(isGatewayInUse(empty.totals)).toBe(false);
    expect(isGatewayInUse({ ...empty.totals, domains: 1 })).toBe(true);
    expect(isGatewayInUse({ ...empty.totals, nodes: 1 })).toBe(true);
    expect(isGatewayInUse({ ...empty.totals, tcpServices: 2 })).toBe(true);
  });

  it('counts what needs attention, a drift check with differences once', () => {
    expect(countAttention(empty)).toBe(0);
    expect(
      countAttention({
        ...empty,
        offlineNodes: { total: 3, items: [] },
        setAside: { total: 1, items: [] },
        drift: { checkedAt: '2026-11-26T10:00:00Z', differences: ['a', 'b'], repaired: true },
      }),
    ).toBe(5);
    expect(
      countAttention({ ...empty, drift: { checkedAt: '2026-11-26T10:00:00Z', differences: [], repaired: false } }),
    ).toBe(0);
  });

  it('says what is wrong with a certificate in words', () => {
    const now = new Date('2026-11-26T12:00:00Z');
    const item = { id: 1, domain: 'a.example', notAfter: null, error: null };
    expect(describeCertificateProblem({ ...item, problem: 'failed', error: 'NXDOMAIN' }, now)).toBe(
      'issuance failed: NXDOMAIN',
    );
    expect(describeCertificateProblem({ ...item, problem: 'expiring', notAfter: '2026-12-01T12:00:00Z' }, now)).toBe(
      'ends in 5 days',
    );
    expect(describeCertificateProblem({ ...item, problem: 'expired', notAfter: '2026-11-25T12:00:00Z' }, now)).toBe(
      'expired 1 day ago',
    );
  });
});
