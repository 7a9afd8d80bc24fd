// The cluster's PKI, made with Debian's openssl CLI (Node can make keys but not certificates).
// P-256 keys throughout: quick to generate and accepted by every component, service-account
// tokens included (ES256).
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import type { StatePaths } from './paths.js';

const DAYS = '3650';

async function openssl(args: string[]): Promise<void> {
  try {
    await execa('openssl', args);
  } catch (error) {
    const cause = error as { code?: string; stderr?: string };
    if (cause.code === 'ENOENT') throw new Error('openssl not found: install Debian package `openssl`');
    throw new Error(`openssl ${args[0]} failed: ${cause.stderr ?? String(error)}`);
  }
}

function newKey(path: string): Promise<void> {
  return openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

/** Signs a leaf certificate for `subject` with the CA; `extensions` is an x509v3 config section. */
async function signLeaf(paths: StatePaths, name: string, subject: string, extensions: string[]): Promise<void> {
  const key = `${paths.pki}/${name}.key`;
  const csr = `${paths.pki}/${name}.csr`;
  const ext = `${paths.pki}/${name}.ext`;
  await newKey(key);
  await openssl(['req', '-new', '-key', key, '-subj', subject, '-out', csr]);
  await writeFile(
    ext,
    [
      'basicConstraints = critical, CA:FALSE',
      'keyUsage = critical, digitalSignature, keyEncipherment',
      ...extensions,
      '',
    ].join('\n'),
  );
  await openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    paths.caCert,
    '-CAkey',
    paths.caKey,
    '-set_serial',
    `0x${randomBytes(16).toString('hex')}`,
    '-days',
    DAYS,
    '-extfile',
    ext,
    '-out',
    `${paths.pki}/${name}.crt`,
  ]);
  await rm(csr);
  await rm(ext);
}

/** CA, apiserver serving cert (127.0.0.1, localhost, in-cluster names), admin client cert, service-account key pair. */
export async function createCertificates(paths: StatePaths, serviceIp: string): Promise<void> {
  await mkdir(paths.pki, { recursive: true });
  await newKey(paths.caKey);
  await openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    paths.caKey,
    '-subj',
    '/CN=helm-installer-test-ca',
    '-days',
    DAYS,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    '-out',
    paths.caCert,
  ]);
  const names = [
    'localhost',
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    'kubernetes.default.svc.cluster.local',
  ];
  await signLeaf(paths, 'apiserver', '/CN=kube-apiserver', [
    'extendedKeyUsage = serverAuth',
    `subjectAltName = ${['IP:127.0.0.1', `IP:${serviceIp}`, ...names.map((n) => `DNS:${n}`)].join(', ')}`,
  ]);
  // O=system:masters is the group the apiserver's RBAC treats as cluster-admin without any binding.
  await signLeaf(paths, 'admin', '/O=system:masters/CN=kubernetes-admin', ['extendedKeyUsage = clientAuth']);
  await newKey(paths.serviceAccountKey);
  await openssl(['pkey', '-in', paths.serviceAccountKey, '-pubout', '-out', paths.serviceAccountPub]);
}

/** An admin kubeconfig with the certificates embedded, so the file alone is enough. */
export async function writeAdminKubeconfig(paths: StatePaths, server: string): Promise<void> {
  const b64 = async (file: string) => (await readFile(file)).toString('base64');
  const text = `apiVersion: v1
kind: Config
clusters:
- name: helm-installer-test
  cluster:
    server: ${server}
    certificate-authority-data: ${await b64(paths.caCert)}
users:
- name: admin
  user:
    client-certificate-data: ${await b64(paths.adminCert)}
    client-key-data: ${await b64(paths.adminKey)}
contexts:
- name: helm-installer-test
  context:
    cluster: helm-installer-test
    user: admin
current-context: helm-installer-test
`;
  await writeFile(paths.kubeconfig, text, { mode: 0o600 });
}
