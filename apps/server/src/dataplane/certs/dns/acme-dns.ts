import type { DnsProviderConfig } from '../../../model/certificates.js';
import { assertRecordName, assertTxtValue, providerError, setting, type DnsSolver, type SolverDeps } from './solver.js';

// acme-dns (github.com/joohoi/acme-dns): `_acme-challenge.<domain>` is a CNAME the operator made once to the
// account's `<subdomain>.<acme-dns zone>`, and `POST /update` with `X-Api-User`/`X-Api-Key` and
// `{ "subdomain", "txt" }` sets its value. acme-dns keeps the two newest values and has no delete: cleanup does
// nothing (the next order overwrites the oldest).

export function createAcmeDnsSolver(config: DnsProviderConfig, deps: SolverDeps): DnsSolver {
  return {
    async present(recordName, value) {
      assertRecordName(recordName);
      const base = (setting(config, 'serverUrl') ?? '').replace(/\/+$/, '');
      const response = await deps.fetch(`${base}/update`, {
        method: 'POST',
        headers: {
          'x-api-user': setting(config, 'username') ?? '',
          'x-api-key': config.secret,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ subdomain: setting(config, 'subdomain') ?? '', txt: assertTxtValue(value) }),
        signal: AbortSignal.timeout(30_000),
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => null)) as { error?: string } | null;
        throw providerError(config, `acme-dns answered ${String(response.status)}: ${body?.error ?? 'no details'}`);
      }
    },
    cleanup: () => Promise.resolve(),
  };
}
