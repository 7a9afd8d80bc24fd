// The pure parts of the Flux OCI push: the manifest's exact bytes, the annotations, a tarball
// that is the same for the same folder, and the errors a user meets when the address is wrong.
// The push itself, against the real registry and read back by source-controller, is in
// test/integration/flux.test.ts.
import { chmodSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstallerError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import {
  annotations,
  describe as describeBlob,
  manifestJson,
  pushArtifact,
  tarballOf,
} from '../../src/export/oci-push.js';
import { tempDir } from '../helpers.js';

function sampleDir(): string {
  const dir = tempDir('oci-push');
  mkdirSync(join(dir, 'b', 'c'), { recursive: true });
  writeFileSync(join(dir, 'z.yaml'), 'kind: ConfigMap\n');
  writeFileSync(join(dir, 'a.yaml'), 'kind: Namespace\n');
  writeFileSync(join(dir, 'b', 'c', 'kustomization.yaml'), 'resources: []\n');
  // Modes travel in the tarball: fixed here, whatever the umask.
  for (const d of ['b', 'b/c']) chmodSync(join(dir, d), 0o755);
  for (const f of ['a.yaml', 'z.yaml', 'b/c/kustomization.yaml']) chmodSync(join(dir, f), 0o644);
  return dir;
}

/** The listing by the system's GNU tar, a reader independent of the code under test. */
async function listing(tgz: Buffer): Promise<string[]> {
  const file = join(tempDir('oci-list'), 'x.tgz');
  writeFileSync(file, tgz);
  const { stdout } = await execa('tar', ['--list', '--verbose', '--full-time', '--numeric-owner', '-z', '-f', file]);
  return stdout.split('\n').map((line) => line.replace(/\s+/g, ' '));
}

describe('the manifest', () => {
  it('has the fields and order `flux push artifact` writes', () => {
    const config = describeBlob('application/vnd.cncf.flux.config.v1+json', Buffer.from('{}'));
    const layer = { mediaType: 'application/vnd.cncf.flux.content.v1.tar+gzip', size: 3, digest: 'sha256:abc' };
    const notes = annotations({
      source: 'https://example.com/app.git',
      revision: '1.2.0@sha1:0123',
      created: new Date('2026-11-25T10:11:12.345Z'),
    });
    expect(manifestJson(config, layer, notes).toString()).toBe(
      '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",' +
        '"config":{"mediaType":"application/vnd.cncf.flux.config.v1+json","size":2,' +
        '"digest":"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},' +
        '"layers":[{"mediaType":"application/vnd.cncf.flux.content.v1.tar+gzip","size":3,"digest":"sha256:abc"}],' +
        '"annotations":{"org.opencontainers.image.created":"2026-11-25T10:11:12Z",' +
        '"org.opencontainers.image.revision":"1.2.0@sha1:0123",' +
        '"org.opencontainers.image.source":"https://example.com/app.git"}}',
    );
  });
});

describe('the tarball', () => {
  it('lists every entry sorted, relative, with mtime 0 and owner 0/0', async () => {
    expect(await listing(await tarballOf(sampleDir()))).toEqual([
      '-rw-r--r-- 0/0 16 1970-01-01 00:00:00 a.yaml',
      'drwxr-xr-x 0/0 0 1970-01-01 00:00:00 b/',
      'drwxr-xr-x 0/0 0 1970-01-01 00:00:00 b/c/',
      '-rw-r--r-- 0/0 14 1970-01-01 00:00:00 b/c/kustomization.yaml',
      '-rw-r--r-- 0/0 16 1970-01-01 00:00:00 z.yaml',
    ]);
  });

  it("is byte for byte the same for the same content, whatever the files' times", async () => {
    const first = sampleDir();
    const second = sampleDir();
    utimesSync(join(second, 'z.yaml'), new Date('2001-01-01'), new Date('2001-01-01'));
    expect((await tarballOf(first)).equals(await tarballOf(second))).toBe(true);
  });
});

describe('pushing to something that is not a registry', () => {
  let server: Server;
  let address: string;
  beforeAll(async () => {
    // A plain web server answering 404 to everything: a --push address that points elsewhere.
    server = createServer((_req, res) =>
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found'),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const push = (registry: string, extra: Partial<Parameters<typeof pushArtifact>[0]> = {}) =>
    pushArtifact({
      registry,
      repository: 'app/storefront',
      tag: '1.0.0',
      dir: sampleDir(),
      source: 's',
      revision: 'r',
      plainHttp: true,
      ...extra,
    });

  it('names the registry, the step and its answer (usage error, exit 2)', async () => {
    const error = await push(address).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InstallerError);
    expect((error as InstallerError).exitCode).toBe(ExitCode.usage);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^pushing to ${address}/app/storefront: starting the upload of sha256:[0-9a-f]{64} failed: the registry answered 404: 404 page not found$`,
      ),
    );
  });

  it('says the registry cannot be reached when nothing listens (transient, exit 5)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await push(`127.0.0.1:${port}`).catch((e: unknown) => e);
    expect((error as InstallerError).exitCode).toBe(ExitCode.transient);
    expect((error as Error).message).toMatch(
      new RegExp(`^cannot reach the registry 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
  });

  it('refuses a repository name or tag the registry would refuse, before any upload', async () => {
    const badRepo = await push(address, { repository: 'App/Storefront' }).catch((e: unknown) => e);
    expect((badRepo as Error).message).toBe('OCI repository "App/Storefront" is not a valid name');
    expect((badRepo as InstallerError).exitCode).toBe(ExitCode.usage);
    const badTag = await push(address, { tag: '-1.0' }).catch((e: unknown) => e);
    expect((badTag as Error).message).toBe('OCI tag "-1.0" is not a valid tag');
  });
});
