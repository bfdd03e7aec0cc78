import type { DnsProviderConfig } from '../../../model/certificates.js';
import { assertRecordName, assertTxtValue, providerError, setting, type DnsSolver, type SolverDeps } from './solver.js';

// Cloudflare's API v4 with an API token (scope: Zone → DNS → Edit): the zone by id, or found by name
// (`GET /zones?name=`), then `POST /zones/{id}/dns_records` and `DELETE /zones/{id}/dns_records/{record}`. Answers
// are `{ success, errors: [{ code, message }], result }`; a failure names Cloudflare's own message.

export const CLOUDFLARE_API = 'https://api.cloudflare.com/client/v4';

interface CloudflareEnvelope<T> {
  success: boolean;
  errors?: { code: number; message: string }[];
  result: T;
}

export function createCloudflareSolver(config: DnsProviderConfig, deps: SolverDeps): DnsSolver {
  const headers = { authorization: `Bearer ${config.secret}`, 'content-type': 'application/json' };

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await deps.fetch(`${CLOUDFLARE_API}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const envelope = (await response.json().catch(() => null)) as CloudflareEnvelope<T> | null;
    if (!response.ok || envelope?.success !== true) {
      const reasons = envelope?.errors?.map((e) => `${e.message} (${String(e.code)})`).join('; ');
      throw providerError(config, `Cloudflare answered ${String(response.status)}: ${reasons ?? 'no details'}`);
    }
    return envelope.result;
  }

  async function zoneId(recordName: string): Promise<string> {
    const configured = setting(config, 'zoneId');
    if (configured !== undefined) return configured;
    const zone = await deps.findZone(recordName);
    const zones = await call<{ id: string; name: string }[]>('GET', `/zones?name=${encodeURIComponent(zone)}`);
    const found = zones.find((z) => z.name === zone);
    if (found === undefined) throw providerError(config, `the API token sees no zone ${zone}`);
    return found.id;
  }

  return {
    async present(recordName, value) {
      const id = await zoneId(assertRecordName(recordName));
      await call('POST', `/zones/${encodeURIComponent(id)}/dns_records`, {
        type: 'TXT',
        name: recordName,
        content: `"${assertTxtValue(value)}"`,
        ttl: 60,
      });
    },
    async cleanup(recordName, value) {
      const id = await zoneId(assertRecordName(recordName));
      const query = `type=TXT&name=${encodeURIComponent(recordName)}`;
      const records = await call<{ id: string; content: string }[]>(
        'GET',
        `/zones/${encodeURIComponent(id)}/dns_records?${query}`,
      );
      const wanted = assertTxtValue(value);
      for (const record of records.filter((r) => r.content.replace(/^"|"$/g, '') === wanted)) {
        await call('DELETE', `/zones/${encodeURIComponent(id)}/dns_records/${encodeURIComponent(record.id)}`);
      }
    },
  };
}
