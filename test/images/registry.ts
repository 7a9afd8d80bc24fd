// A real image registry for tests: Debian's docker-registry (Distribution 2.8) on a loopback port,
// filesystem storage in a temp dir, optional htpasswd auth and TLS (own CA). Images are pushed
// through the HTTP API: a config blob and a manifest are all a manifest HEAD needs.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { httpRequest, type HttpResponse } from '../../src/registry/registry-http.js';

const run = promisify(execFile);
const REGISTRY_BINARY = '/usr/bin/docker-registry';

export interface TestRegistry {
  /** `http(s)://127.0.0.1:<port>` */
  url: string;
  /** `127.0.0.1:<port>`: the registry part of image references. */
  host: string;
  /** PEM of the CA that signed the registry's certificate (TLS only). */
  caFile?: string;
  stop(): Promise<void>;
}

export interface RegistryCredentials {
  user: string;
  password: string;
}

/** Debian's docker-registry and htpasswd (apt-get install docker-registry apache2-utils). */
export function registryAvailable(): boolean {
  return existsSync(REGISTRY_BINARY) && existsSync('/usr/bin/htpasswd') && existsSync('/usr/bin/openssl');
}

export async function startRegistry(
  options: { htpasswd?: RegistryCredentials; tls?: boolean } = {},
): Promise<TestRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'test-registry-'));
  try {
    const port = await freePort();
    const host = `127.0.0.1:${port}`;
    const config: string[] = [
      'version: 0.1',
      'log: {level: error, accesslog: {disabled: true}}',
      `storage: {filesystem: {rootdirectory: ${JSON.stringify(join(dir, 'data'))}}, delete: {enabled: true}}`,
      'http:',
      `  addr: ${host}`,
      `  secret: ${randomBytes(16).toString('hex')}`,
    ];
    let caFile: string | undefined;
    if (options.tls) {
      const tls = await makeCertificates(dir);
      caFile = tls.caFile;
      config.push(`  tls: {certificate: ${JSON.stringify(tls.certFile)}, key: ${JSON.stringify(tls.keyFile)}}`);
    }
    if (options.htpasswd) {
      const { stdout } = await run('htpasswd', ['-Bbn', options.htpasswd.user, options.htpasswd.password]);
      await writeFile(join(dir, 'htpasswd'), stdout);
      config.push(`auth: {htpasswd: {realm: test-registry, path: ${JSON.stringify(join(dir, 'htpasswd'))}}}`);
    }
    await writeFile(join(dir, 'config.yml'), `${config.join('\n')}\n`);

    const child = spawn(REGISTRY_BINARY, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const url = `${options.tls ? 'https' : 'http'}://${host}`;
    const ca = caFile ? [await readFile(caFile, 'utf8')] : undefined;
    await waitUntilServing(child, url, ca, () => stderr);
    return {
      url,
      host,
      ...(caFile ? { caFile } : {}),
      stop: async () => {
        await stopChild(child);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Pushes a config blob and an OCI manifest as `<name>:<tag>`; returns the manifest digest. */
export async function pushTestImage(
  registry: TestRegistry,
  name: string,
  tag: string,
  creds?: RegistryCredentials,
): Promise<string> {
  const ca = registry.caFile ? [await readFile(registry.caFile, 'utf8')] : undefined;
  const auth: Record<string, string> = creds
    ? { Authorization: `Basic ${Buffer.from(`${creds.user}:${creds.password}`).toString('base64')}` }
    : {};
  const call = async (method: 'POST' | 'PUT', url: URL, headers: Record<string, string>, body?: Buffer | string) => {
    const response = await httpRequest({
      url,
      method,
      headers: { ...auth, ...headers },
      timeoutMs: 10_000,
      ...(ca ? { ca } : {}),
      ...(body !== undefined ? { body } : {}),
    });
    if (response.status >= 300)
      throw new Error(`${method} ${url.pathname}: HTTP ${response.status} ${response.body.toString()}`);
    return response;
  };

  // The config names the tag so that each pushed image has its own digest.
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: [] },
      config: { Labels: { tag } },
    }),
  );
  const configDigest = sha256(config);
  const upload = await call('POST', new URL(`/v2/${name}/blobs/uploads/`, registry.url), {});
  const location = new URL(String(upload.headers.location), registry.url);
  location.searchParams.set('digest', configDigest);
  await call('PUT', location, { 'Content-Type': 'application/octet-stream' }, config);

  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configDigest, size: config.length },
    layers: [],
  });
  const put: HttpResponse = await call(
    'PUT',
    new URL(`/v2/${name}/manifests/${tag}`, registry.url),
    { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json' },
    manifest,
  );
  const digest = sha256(Buffer.from(manifest));
  const reported = put.headers['docker-content-digest'];
  if (reported && reported !== digest)
    throw new Error(`registry computed digest ${String(reported)}, expected ${digest}`);
  return digest;
}

function sha256(data: Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilServing(
  child: ChildProcess,
  url: string,
  ca: string[] | undefined,
  stderr: () => string,
): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited with ${child.exitCode}: ${stderr()}`);
    try {
      const response = await httpRequest({
        url: new URL('/v2/', url),
        method: 'GET',
        timeoutMs: 1000,
        ...(ca ? { ca } : {}),
      });
      if (response.status === 200 || response.status === 401) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await stopChild(child);
  throw new Error(`docker-registry did not answer on ${url} within 20 s: ${stderr()}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

async function makeCertificates(dir: string): Promise<{ caFile: string; certFile: string; keyFile: string }> {
  const f = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  await openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=helm-installer test CA',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  await openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    f('server.key'),
    '-out',
    f('server.csr'),
  );
  await writeFile(f('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await openssl(
    'x509',
    '-req',
    '-in',
    f('server.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    f('server.ext'),
    '-out',
    f('server.crt'),
  );
  return { caFile: f('ca.crt'), certFile: f('server.crt'), keyFile: f('server.key') };
}
