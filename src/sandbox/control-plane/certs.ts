// Certificates and keys for a throw-away control plane, made with the openssl CLI.
//
// Why openssl and not an npm X.509 library: this is test/sandbox-only code inside a service
// that ships to production, so it should add no runtime dependency; openssl (1.1.1 or 3.x)
// is present wherever the Kubernetes binaries are built, and P-256 keys keep every call fast.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { ControlPlaneError } from './errors.js';

const execFileP = promisify(execFile);

export interface KeyPair {
  certFile: string;
  keyFile: string;
}

export interface Ca extends KeyPair {
  certPem: string;
}

const OPENSSL_CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
[v3_ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
`;

async function openssl(args: string[], dir: string, step: string): Promise<void> {
  try {
    await execFileP('openssl', args, { cwd: dir, timeout: 30_000 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') {
      throw new ControlPlaneError(
        'certificates',
        `openssl is not installed (needed to ${step}); install it (Debian: apt-get install openssl) and retry`,
      );
    }
    throw new ControlPlaneError('certificates', `openssl failed to ${step}: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** One config file per certificate: certificates are made concurrently in the same directory. */
async function configFile(dir: string, name: string): Promise<string> {
  const file = path.join(dir, `${name}.cnf`);
  await fs.writeFile(file, OPENSSL_CONFIG);
  return file;
}

async function newKey(dir: string, name: string): Promise<string> {
  const keyFile = path.join(dir, `${name}.key`);
  await openssl(
    ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', keyFile],
    dir,
    `generate the key ${name}.key`,
  );
  await fs.chmod(keyFile, 0o600);
  return keyFile;
}

/** Escapes one value of an openssl -subj string. */
function subjValue(v: string): string {
  return v.replace(/[\\/+=,]/g, (c) => `\\${c}`);
}

/** A fresh self-signed CA in `dir` (ca.crt, ca.key). */
export async function createCa(dir: string, commonName = 'drydock-test-ca'): Promise<Ca> {
  await fs.mkdir(dir, { recursive: true });
  const cnf = await configFile(dir, 'ca');
  const keyFile = await newKey(dir, 'ca');
  const certFile = path.join(dir, 'ca.crt');
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-config',
      cnf,
      '-extensions',
      'v3_ca',
      '-key',
      keyFile,
      '-sha256',
      '-days',
      '3650',
      '-subj',
      `/CN=${subjValue(commonName)}`,
      '-out',
      certFile,
    ],
    dir,
    'create the CA certificate',
  );
  await fs.rm(cnf, { force: true });
  return { certFile, keyFile, certPem: await fs.readFile(certFile, 'utf8') };
}

export interface SignOptions {
  /** file name stem: <name>.crt / <name>.key */
  name: string;
  commonName: string;
  organizations?: string[];
  /** subjectAltNames for a serving certificate, e.g. ['DNS:localhost', 'IP:127.0.0.1'] */
  altNames?: string[];
  days?: number;
}

/** A key and a certificate signed by `ca`: a client certificate, or a serving one when altNames are given. */
export async function signCert(ca: Ca, dir: string, opts: SignOptions): Promise<KeyPair> {
  await fs.mkdir(dir, { recursive: true });
  const cnf = await configFile(dir, opts.name);
  const keyFile = await newKey(dir, opts.name);
  const csr = path.join(dir, `${opts.name}.csr`);
  const certFile = path.join(dir, `${opts.name}.crt`);
  const subj = [
    ...(opts.organizations ?? []).map((o) => `/O=${subjValue(o)}`),
    `/CN=${subjValue(opts.commonName)}`,
  ].join('');
  await openssl(
    ['req', '-new', '-config', cnf, '-key', keyFile, '-subj', subj, '-out', csr],
    dir,
    `create the request ${opts.name}.csr`,
  );
  let extFile = cnf;
  let section = 'client';
  if (opts.altNames && opts.altNames.length > 0) {
    extFile = path.join(dir, `${opts.name}.ext`);
    section = 'serving';
    await fs.writeFile(
      extFile,
      `[serving]\nbasicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature,keyEncipherment\n` +
        `extendedKeyUsage = serverAuth,clientAuth\nsubjectAltName = ${opts.altNames.join(',')}\n`,
    );
  }
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      ca.certFile,
      '-CAkey',
      ca.keyFile,
      '-set_serial',
      `0x${randomBytes(12).toString('hex')}`,
      '-sha256',
      '-days',
      String(opts.days ?? 365),
      '-extfile',
      extFile,
      '-extensions',
      section,
      '-out',
      certFile,
    ],
    dir,
    `sign ${opts.name}.crt`,
  );
  await fs.rm(csr, { force: true });
  await fs.rm(cnf, { force: true });
  return { certFile, keyFile };
}

/** The service-account token signing key pair (sa.key, sa.pub). */
export async function createServiceAccountKey(dir: string): Promise<{ keyFile: string; pubFile: string }> {
  await fs.mkdir(dir, { recursive: true });
  const keyFile = await newKey(dir, 'sa');
  const pubFile = path.join(dir, 'sa.pub');
  await openssl(['pkey', '-in', keyFile, '-pubout', '-out', pubFile], dir, 'extract the service-account public key');
  return { keyFile, pubFile };
}
