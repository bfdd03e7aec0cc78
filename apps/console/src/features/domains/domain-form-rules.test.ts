import { describe, expect, it } from 'vitest';
import { getInitialDomainValues, ownerOptions } from './domain-form-rules';

describe('domain owner choices', () => {
  const nodes = [
    { id: 1, name: 'Gateway (local)', isLocal: true },
    { id: 4, name: 'office', isLocal: false },
  ];

  it('lists Admin first and never the local node', () => {
    expect(ownerOptions(nodes)).toEqual([
      { value: '', label: 'Admin' },
      { value: '4', label: 'office' },
    ]);
  });

  it('keeps the current owner listed when it is not among the loaded nodes', () => {
    expect(ownerOptions(nodes, { ownerNodeId: 4, ownerNodeName: 'office' })).toHaveLength(2);
    expect(ownerOptions([], { ownerNodeId: 9, ownerNodeName: 'far' }).at(-1)).toEqual({ value: '9', label: 'far' });
  });

  it('starts the form with the owner as the select holds it', () => {
    expect(getInitialDomainValues().ownerNodeId).toBe('');
    expect(
      getInitialDomainValues({
        id: 1,
        domain: 'a.example.com',
        ssl: 'certbot',
        ownerNodeId: 9,
        ownerNodeName: 'far',
        certificate: null,
        created_at: '',
        updated_at: '',
      }).ownerNodeId,
    ).toBe('9');
  });
});
