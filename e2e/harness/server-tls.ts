import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.js';

export interface ServerTls {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/**
 * openssl: a throw-away CA (P-256, 2 days) and a certificate signed by it for a test server's HTTPS (pebble's API, the
 * test identity provider), written into `dir` as `<prefix>-ca.pem`, `<prefix>-cert.pem` and `<prefix>-key.pem`.
 */
export async function makeServerTls(
  dir: string,
  prefix: string,
  names: { caSubject: string; subject: string; subjectAltName: string },
): Promise<ServerTls> {
  const caFile = join(dir, `${prefix}-ca.pem`);
  const caKey = join(dir, `${prefix}-ca.key`);
  const certFile = join(dir, `${prefix}-cert.pem`);
  const keyFile = join(dir, `${prefix}-key.pem`);
  const csr = join(dir, `${prefix}.csr`);
  const ext = join(dir, `${prefix}.ext`);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  await run('openssl', [
    'req',
    '-x509',
    ...ec,
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-days',
    '2',
    '-subj',
    names.caSubject,
  ]);
  await run('openssl', ['req', '-new', ...ec, '-keyout', keyFile, '-out', csr, '-subj', names.subject]);
  writeFileSync(ext, `subjectAltName=${names.subjectAltName}\n`);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    caFile,
    '-CAkey',
    caKey,
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    ext,
    '-out',
    certFile,
  ]);
  return { caFile, certFile, keyFile };
}
