import aws4 from 'aws4';
import { XMLParser } from 'fast-xml-parser';
import type { DnsProviderConfig } from '../../../model/certificates.js';
import { assertRecordName, assertTxtValue, providerError, setting, type DnsSolver, type SolverDeps } from './solver.js';

// Amazon Route 53's REST API (2013-04-01), signed with AWS Signature V4 (`aws4`): the hosted zone by id, or found by
// name (`GET /hostedzonesbyname`), then `POST /hostedzone/{id}/rrset/` with an UPSERT or DELETE change batch, and
// `GET /change/{id}` until INSYNC. The IAM policy needs route53:ListHostedZonesByName, ChangeResourceRecordSets and
// GetChange. Answers are XML; an error is `<ErrorResponse><Error><Code/><Message/></Error></ErrorResponse>`.

export const ROUTE53_HOST = 'route53.amazonaws.com';
const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false });

export interface Route53Deps extends SolverDeps {
  sleep?: (ms: number) => Promise<void>;
  /** How long to wait for INSYNC (default 120 s). */
  syncTimeoutMs?: number;
}

type Xml = Record<string, unknown>;

function dig(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) current = (current as Xml | undefined)?.[key];
  return current;
}

/** A text node's value (numbers and booleans as written); null for anything else. */
function textOf(value: unknown): string | null {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
}

export function createRoute53Solver(config: DnsProviderConfig, deps: Route53Deps): DnsSolver {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const accessKeyId = setting(config, 'accessKeyId') ?? '';
  const region = setting(config, 'region') ?? 'us-east-1';

  async function call(method: 'GET' | 'POST', path: string, body?: string): Promise<Xml> {
    const request = aws4.sign(
      {
        host: ROUTE53_HOST,
        path,
        method,
        service: 'route53',
        region,
        ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/xml' } }),
      },
      { accessKeyId, secretAccessKey: config.secret },
    );
    const response = await deps.fetch(`https://${ROUTE53_HOST}${path}`, {
      method,
      headers: request.headers as Record<string, string>,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const xml = (text.trim() === '' ? {} : parser.parse(text)) as Xml;
    if (!response.ok) {
      const code = textOf(dig(xml, 'ErrorResponse', 'Error', 'Code')) ?? Object.keys(xml)[0] ?? 'error';
      const messages = dig(xml, 'ErrorResponse', 'Error', 'Message') ?? dig(xml, 'InvalidChangeBatch', 'Messages');
      throw providerError(
        config,
        `Route 53 answered ${String(response.status)} ${code}: ${JSON.stringify(messages ?? '')}`,
      );
    }
    return xml;
  }

  async function hostedZoneId(recordName: string): Promise<string> {
    const configured = setting(config, 'hostedZoneId');
    if (configured !== undefined) return configured;
    const zone = await deps.findZone(recordName);
    const xml = await call('GET', `/2013-04-01/hostedzonesbyname?dnsname=${encodeURIComponent(zone)}&maxitems=1`);
    const zones = dig(xml, 'ListHostedZonesByNameResponse', 'HostedZones', 'HostedZone');
    const first = (Array.isArray(zones) ? zones[0] : zones) as Xml | undefined;
    if (first === undefined || String(first.Name) !== `${zone}.`) {
      throw providerError(config, `the access key sees no hosted zone ${zone}`);
    }
    return String(first.Id).replace(/^\/hostedzone\//, '');
  }

  async function change(action: 'UPSERT' | 'DELETE', recordName: string, value: string): Promise<void> {
    const name = assertRecordName(recordName);
    const txt = assertTxtValue(value);
    const zoneId = await hostedZoneId(name);
    if (!/^[A-Z0-9]{1,32}$/.test(zoneId)) throw providerError(config, 'refusing the hosted zone id');
    const body =
      '<?xml version="1.0" encoding="UTF-8"?>' +
      '<ChangeResourceRecordSetsRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><ChangeBatch>' +
      `<Comment>postern DNS-01</Comment><Changes><Change><Action>${action}</Action><ResourceRecordSet>` +
      `<Name>${name}.</Name><Type>TXT</Type><TTL>60</TTL><ResourceRecords><ResourceRecord>` +
      `<Value>"${txt}"</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes>` +
      '</ChangeBatch></ChangeResourceRecordSetsRequest>';
    const xml = await call('POST', `/2013-04-01/hostedzone/${zoneId}/rrset/`, body);
    const changeId = (textOf(dig(xml, 'ChangeResourceRecordSetsResponse', 'ChangeInfo', 'Id')) ?? '').replace(
      /^\/change\//,
      '',
    );
    if (action === 'DELETE' || !/^[A-Z0-9]{1,64}$/.test(changeId)) return;
    const deadline = Date.now() + (deps.syncTimeoutMs ?? 120_000);
    for (;;) {
      const status = dig(
        await call('GET', `/2013-04-01/change/${changeId}`),
        'GetChangeResponse',
        'ChangeInfo',
        'Status',
      );
      if (status === 'INSYNC') return;
      if (Date.now() >= deadline) throw providerError(config, `the change ${changeId} did not reach INSYNC in time`);
      await sleep(2000);
    }
  }

  return {
    present: (recordName, value) => change('UPSERT', recordName, value),
    async cleanup(recordName, value) {
      try {
        await change('DELETE', recordName, value);
      } catch (err) {
        // Route 53 refuses to delete a record that is not there (InvalidChangeBatch): already clean.
        if (!(err instanceof Error) || !/InvalidChangeBatch|not found/i.test(err.message)) throw err;
      }
    },
  };
}
