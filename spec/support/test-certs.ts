/**
 * Certificates made in the test run (never checked in): a CA, a server certificate for Nomad's
 * client name `client.global.nomad`, a client certificate, and a stranger CA's certificate.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generate } from 'selfsigned';

/** PEM files of one test PKI, written under a dir. */
export interface TestPki {
  caFile: string;
  /** Server cert for client.global.nomad (and 127.0.0.1), signed by the CA. */
  serverCertFile: string;
  serverKeyFile: string;
  /** Client cert signed by the CA. */
  clientCertFile: string;
  clientKeyFile: string;
  /** A cert for another name (client.elsewhere.nomad), signed by the CA. */
  otherNameCertFile: string;
  otherNameKeyFile: string;
  /** A client cert signed by a different CA. */
  strangerCertFile: string;
  strangerKeyFile: string;
}

type Ext = NonNullable<NonNullable<Parameters<typeof generate>[1]>['extensions']>;

const caExt = [
  { name: 'basicConstraints', cA: true, critical: true },
  { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
] as Ext;

const leafExt = (dns: string) =>
  [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
    {
      name: 'subjectAltName',
      altNames: [
        { type: 2, value: dns },
        { type: 7, ip: '127.0.0.1' },
      ],
    },
  ] as Ext;

/** Generates the PKI (EC keys: fast) into `dir`. */
export async function makeTestPki(dir: string): Promise<TestPki> {
  const opts = { keyType: 'ec' as const, algorithm: 'sha256' as const };
  const ca = await generate([{ name: 'commonName', value: 'berth test CA' }], { ...opts, extensions: caExt });
  const signed = (cn: string) => generate([{ name: 'commonName', value: cn }], { ...opts, extensions: leafExt(cn), ca: { key: ca.private, cert: ca.cert } });
  const server = await signed('client.global.nomad');
  const client = await signed('client.global.nomad');
  const other = await signed('client.elsewhere.nomad');
  const strangerCa = await generate([{ name: 'commonName', value: 'stranger CA' }], { ...opts, extensions: caExt });
  const stranger = await generate([{ name: 'commonName', value: 'client.global.nomad' }], {
    ...opts,
    extensions: leafExt('client.global.nomad'),
    ca: { key: strangerCa.private, cert: strangerCa.cert },
  });
  const w = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text, { mode: 0o600 });
    return p;
  };
  return {
    caFile: w('ca.pem', ca.cert),
    serverCertFile: w('server.pem', server.cert),
    serverKeyFile: w('server-key.pem', server.private),
    clientCertFile: w('client.pem', client.cert),
    clientKeyFile: w('client-key.pem', client.private),
    otherNameCertFile: w('other.pem', other.cert),
    otherNameKeyFile: w('other-key.pem', other.private),
    strangerCertFile: w('stranger.pem', stranger.cert),
    strangerKeyFile: w('stranger-key.pem', stranger.private),
  };
}
