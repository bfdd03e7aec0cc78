import { createPrivateKey, createPublicKey } from 'node:crypto';
import {
  BasicConstraintsExtension,
  PemConverter,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from '@peculiar/x509';
import { certificateMessages, certificateNameCovers } from '@postern/contract';

// The checks of an operator's own certificate before it is served (docs/api.md "Certificates"): a chain of PEM
// certificates, the domain's first and each one signed by the next; an unencrypted private key that belongs to the
// first; DNS names that cover the domain (a wildcard counts for one label); nothing expired or not yet valid. Each
// failure names the field and says what to do. @peculiar/x509 parses and verifies; node:crypto reads the key.

export interface UploadProblem {
  field: 'certificate' | 'privateKey';
  message: string;
}

export interface CheckedUpload {
  /** Key first, then the chain: the combined PEM nginx serves. */
  pem: string;
  names: string[];
  notAfter: string;
}

export type UploadCheck = { ok: true; value: CheckedUpload } | { ok: false; problem: UploadProblem };

const fail = (field: UploadProblem['field'], message: string): UploadCheck => ({
  ok: false,
  problem: { field, message },
});

/** The DNS names of a certificate's subjectAltName (none: its subject's CN, as old certificates carry it). */
export function dnsNamesOf(cert: X509Certificate): string[] {
  const san = cert.getExtension(SubjectAlternativeNameExtension);
  const names = san?.names.items.filter((n) => n.type === 'dns').map((n) => n.value.toLowerCase()) ?? [];
  if (names.length > 0) return names;
  const cn = cert.subjectName.getField('CN')[0];
  return cn === undefined ? [] : [cn.toLowerCase()];
}

const day = (date: Date): string => date.toISOString().slice(0, 10);

export async function checkUploadedCertificate(
  domain: string,
  body: { certificate: string; privateKey: string },
  now: Date,
): Promise<UploadCheck> {
  let chain: X509Certificate[];
  try {
    const blocks = PemConverter.decodeWithHeaders(body.certificate).filter((b) => b.type === 'CERTIFICATE');
    chain = blocks.map((block) => new X509Certificate(block.rawData));
  } catch {
    return fail('certificate', certificateMessages.certificatePem);
  }
  const leaf = chain[0];
  if (leaf === undefined) return fail('certificate', certificateMessages.certificatePem);

  let keyPem: string;
  try {
    const key = createPrivateKey(body.privateKey);
    keyPem = key.export({ type: 'pkcs8', format: 'pem' }).toString();
    const fromKey = createPublicKey(key).export({ type: 'spki', format: 'der' });
    if (!fromKey.equals(Buffer.from(leaf.publicKey.rawData))) {
      return fail('privateKey', certificateMessages.keyMismatch);
    }
  } catch {
    // Not a key, more than one, or encrypted (a passphrase cannot be typed into nginx).
    return fail('privateKey', certificateMessages.privateKeyPem);
  }

  for (let index = 0; index + 1 < chain.length; index++) {
    const [cert, issuer] = [chain[index], chain[index + 1]] as [X509Certificate, X509Certificate];
    if (cert.issuer !== issuer.subject) return fail('certificate', certificateMessages.chainOrder(index));
    const constraints = issuer.getExtension(BasicConstraintsExtension);
    if (constraints !== null && !constraints.ca) {
      return fail('certificate', certificateMessages.notCertificateAuthority(index));
    }
    const signed = await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true }).catch(() => false);
    if (!signed) return fail('certificate', certificateMessages.chainSignature(index));
  }

  const names = dnsNamesOf(leaf);
  if (!names.some((name) => certificateNameCovers(name, domain))) {
    return fail('certificate', certificateMessages.namesDoNotCover(domain, names));
  }
  if (leaf.notBefore.getTime() > now.getTime())
    return fail('certificate', certificateMessages.notYetValid(day(leaf.notBefore)));
  for (const [index, cert] of chain.entries()) {
    if (cert.notAfter.getTime() <= now.getTime()) {
      return fail(
        'certificate',
        index === 0
          ? certificateMessages.expired(day(cert.notAfter))
          : certificateMessages.chainExpired(index, day(cert.notAfter)),
      );
    }
  }
  const chainPem = chain.map((cert) => cert.toString('pem')).join('\n');
  return {
    ok: true,
    value: { pem: `${keyPem.trimEnd()}\n${chainPem}\n`, names, notAfter: leaf.notAfter.toISOString() },
  };
}
