import type { Attention } from '@postern/contract';
import { describe, expect, it } from 'vitest';
import { certificateFactsFromAttention, describeServiceTruth, nodeFactsFromAttention } from './service-truth';

const now = new Date('2026-11-26T12:00:00Z');
const on = { enabled: true, applyError: null };
const online = { status: 'online' as const, enabled: true, isLocal: false };

describe('status that tells the truth', () => {
  it('keeps the spec’s dot: public when switched on and applied, with nothing to add when all is well', () => {
    expect(describeServiceTruth(on, { node: online }, now)).toEqual({ isExposed: true, caveats: [] });
    expect(describeServiceTruth({ ...on, enabled: false }, { node: online }, now)).toEqual({
      isExposed: false,
      caveats: [],
    });
    expect(describeServiceTruth({ ...on, applyError: 'port taken' }, {}, now).isExposed).toBe(false);
  });

  it('says when a public service’s node is offline, and that a disconnected node serves nothing', () => {
    expect(describeServiceTruth(on, { node: { ...online, status: 'offline' } }, now)).toEqual({
      isExposed: true,
      caveats: ['node offline'],
    });
    expect(describeServiceTruth(on, { node: { ...online, enabled: false } }, now)).toEqual({
      isExposed: false,
      caveats: ['node disconnected'],
    });
    // The gateway's own node is always there.
    expect(
      describeServiceTruth(on, { node: { status: 'offline', enabled: true, isLocal: true } }, now).caveats,
    ).toEqual([]);
  });

  it('says when its certificate failed or has ended, not while it is pending', () => {
    const node = online;
    expect(describeServiceTruth(on, { node, certificate: { state: 'failed', notAfter: null } }, now).caveats).toEqual([
      'certificate failed',
    ]);
    expect(
      describeServiceTruth(on, { node, certificate: { state: 'valid', notAfter: '2026-11-01T00:00:00Z' } }, now)
        .caveats,
    ).toEqual(['certificate expired']);
    expect(describeServiceTruth(on, { node, certificate: { state: 'pending', notAfter: null } }, now).caveats).toEqual(
      [],
    );
    expect(
      describeServiceTruth(
        on,
        { node: { ...online, status: 'offline' }, certificate: { state: 'failed', notAfter: null } },
        now,
      ).caveats,
    ).toEqual(['node offline', 'certificate failed']);
  });

  it('reads node and certificate facts from the attention answer when the row has none', () => {
    const empty = { total: 0, items: [] };
    const attention: Attention = {
      totals: { nodes: 3, domains: 2, httpServices: 1, tcpServices: 0 },
      offlineNodes: { total: 1, items: [{ id: 7, name: 'pi', latestHandshakeTimestamp: null }] },
      disconnectedNodeIds: [8],
      backendsDown: empty,
      certificates: {
        total: 2,
        items: [
          { id: 1, domain: 'a.example', problem: 'failed', notAfter: null, error: 'x' },
          { id: 2, domain: 'b.example', problem: 'expiring', notAfter: '2026-12-01T00:00:00Z', error: null },
        ],
      },
      setAside: empty,
      drift: null,
    };
    expect(nodeFactsFromAttention(attention, 7)).toEqual({ status: 'offline', enabled: true, isLocal: false });
    expect(nodeFactsFromAttention(attention, 8)?.enabled).toBe(false);
    expect(nodeFactsFromAttention(attention, 9)).toBeUndefined();
    expect(certificateFactsFromAttention(attention, 'a.example')?.state).toBe('failed');
    // Expiring is still valid: the row says nothing yet (the home page does).
    expect(certificateFactsFromAttention(attention, 'b.example')).toBeUndefined();
    expect(certificateFactsFromAttention(attention, null)).toBeUndefined();
  });
});
