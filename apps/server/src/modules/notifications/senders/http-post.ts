import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, resolveAllowed, type AddressPolicy, type Resolve } from '../address-guard.js';

// One POST to a channel's URL, through the address guard (address-guard.ts): the host is checked before, and the
// socket connects only to checked addresses. Redirects are not followed (a 3xx is a failure saying so), the answer
// is read up to a few KiB for the error message, and the whole exchange has one deadline.

export interface Outbound {
  policy: AddressPolicy;
  resolve: Resolve;
  /** How long one delivery may take, connect to last byte. */
  timeoutMs: number;
  /** CA certificates trusted instead of the system's (tests' own CA; operators use NODE_EXTRA_CA_CERTS). */
  ca?: string[] | undefined;
}

export interface PostAnswer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

const ANSWER_MAX = 4096;

/** A delivery failure with a sentence for the operator (never the URL: it may hold the webhook's credential). */
export class DeliveryError extends Error {}

export async function postGuarded(
  target: string,
  body: string,
  headers: Record<string, string>,
  outbound: Outbound,
): Promise<PostAnswer> {
  const url = new URL(target);
  // A literal address never reaches the lookup: it is checked here (a name is checked here and by the lookup).
  await resolveAllowed(url.hostname, outbound.policy, outbound.resolve);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const where = url.host;
  return await new Promise<PostAnswer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Postern', ...headers },
        lookup: guardedLookup(outbound.policy, outbound.resolve),
        agent: false,
        timeout: outbound.timeoutMs,
        ...(outbound.ca ? { ca: outbound.ca } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (text.length < ANSWER_MAX) text += chunk;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: text.slice(0, ANSWER_MAX), headers: res.headers });
        });
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => {
      req.destroy(new DeliveryError(`${where} did not answer within ${String(outbound.timeoutMs / 1000)} s`));
    }, outbound.timeoutMs);
    req.on('timeout', () => {
      req.destroy(new DeliveryError(`${where} did not answer within ${String(outbound.timeoutMs / 1000)} s`));
    });
    req.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    req.on('close', () => {
      clearTimeout(deadline);
    });
    req.end(body);
  });
}

/** A 2xx, or a DeliveryError naming the status (and the first line of the answer). */
export function expectSuccess(answer: PostAnswer, host: string): PostAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  if (answer.status >= 300 && answer.status < 400)
    throw new DeliveryError(`${host} answered ${String(answer.status)} (a redirect): redirects are not followed`);
  const said = answer.body.trim().split('\n')[0]?.slice(0, 200) ?? '';
  throw new DeliveryError(`${host} answered ${String(answer.status)}${said ? `: ${said}` : ''}`);
}

/** A failure as one line for the operator: the error's own message, with the network's codes explained. */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name could not be resolved now',
    ETIMEDOUT: 'the connection timed out',
    ECONNRESET: 'the connection was reset',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    CERT_HAS_EXPIRED: "the server's certificate has expired",
    DEPTH_ZERO_SELF_SIGNED_CERT: "the server's certificate is self-signed (not trusted)",
    SELF_SIGNED_CERT_IN_CHAIN: "the server's certificate is not signed by a trusted CA",
    UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the server's certificate is not signed by a trusted CA",
    ERR_TLS_CERT_ALTNAME_INVALID: "the server's certificate is for another name",
    EAUTH: 'the server refused the username or password',
  };
  const explained = code ? known[code] : undefined;
  const message = error.message.replace(/https?:\/\/\S+/g, '[url]').slice(0, 300);
  return explained ? `${explained} (${message})` : message;
}
