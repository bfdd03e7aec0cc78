// Messages of the certificate rules (docs/api.md "Certificates"): DNS challenges, wildcard domains, uploaded
// certificates and certificate authorities. Plain strings, so the console's forms read them without zod.

export const certificateMessages = {
  wildcardNeedsDns: 'A wildcard domain gets its certificate through a DNS challenge only: choose dns-01',
  dnsNeedsProvider: 'Choose the DNS provider that writes the challenge record',
  providerNotFound: 'This DNS provider does not exist',
  caNotFound: 'This certificate authority does not exist',
  providerInUse: (name: string, count: number): string =>
    `The DNS provider ${name} is used by ${count === 1 ? '1 domain' : `${String(count)} domains`}: choose another one for them first`,
  caInUse: (name: string, count: number): string =>
    `The certificate authority ${name} is used by ${count === 1 ? '1 domain' : `${String(count)} domains`}: choose another one for them first`,
  uploadFirst: 'Upload your certificate first (Certificates → Upload)',
  certificatePem: 'This field must hold one or more PEM certificates (-----BEGIN CERTIFICATE-----)',
  privateKeyPem: 'This field must hold one PEM private key (-----BEGIN PRIVATE KEY-----, unencrypted)',
  keyMismatch: 'This private key does not belong to the first certificate of the chain',
  chainOrder: (index: number): string =>
    `Certificate ${String(index + 1)} of the chain is not signed by certificate ${String(index + 2)}: put the server's certificate first, then each issuer in order`,
  chainSignature: (index: number): string =>
    `Certificate ${String(index + 1)} of the chain names certificate ${String(index + 2)} as its issuer, but its signature does not verify`,
  namesDoNotCover: (domain: string, names: readonly string[]): string =>
    `The certificate is for ${names.length === 0 ? 'no DNS name' : names.join(', ')}, not for ${domain}`,
  expired: (when: string): string => `The certificate expired on ${when}`,
  notYetValid: (when: string): string => `The certificate is not valid before ${when}`,
  chainExpired: (index: number, when: string): string =>
    `Certificate ${String(index + 1)} of the chain expired on ${when}`,
  notCertificateAuthority: (index: number): string =>
    `Certificate ${String(index + 2)} of the chain is not a certificate authority`,
  eabPair: 'Give both the key id and the HMAC key of the external account binding, or neither',
  renewNotAcme: 'Only a domain whose certificate comes from a CA (certbot) can be renewed',
} as const;
