// Tiny single-binary images for the real node, made without pulling anything: a C program built
// with `gcc -static` (no libc in the image needed) and pushed to the loopback registry through
// the registry HTTP API as a one-layer OCI image. The node's pause (sandbox) image is one; tests
// push their own (a program that prints, exits with a code, writes a termination message).
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import * as tar from 'tar';
import { httpRequest } from '../../src/registry/registry-http.js';
import { cacheRoot } from './paths.js';

/** The sandbox process: sleeps until signalled, reaps zombies (it is pid 1 of the pod's namespaces). */
export const PAUSE_SOURCE = `#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
static void quit(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, quit);
  signal(SIGTERM, quit);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
`;

/** Compiles `source` with `gcc -static`, cached by the source's hash; returns the binary's path. */
export async function staticBinary(source: string): Promise<string> {
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const dir = join(cacheRoot(), 'static-programs');
  const bin = join(dir, hash);
  if (existsSync(bin)) return bin;
  await mkdir(dir, { recursive: true });
  // Per call: test files run in parallel workers, and one test file may ask for the same program
  // twice at once, on a cold cache (a shared .tmp, or one per process, was renamed away under
  // the other: ENOENT).
  const unique = `${process.pid}.${randomUUID()}`;
  const src = join(dir, `${hash}.${unique}.c`);
  const tmp = `${bin}.${unique}.tmp`;
  await writeFile(src, source);
  try {
    await execa('gcc', ['-static', '-Os', '-s', '-o', tmp, src]);
  } catch (error) {
    const cause = error as { code?: string; stderr?: string };
    if (cause.code === 'ENOENT')
      throw new Error(
        'gcc not found: install Debian packages `gcc` and `libc6-dev` (static programs for the real node)',
      );
    throw new Error(`gcc -static failed: ${cause.stderr ?? String(error)}`);
  }
  // Atomic: a worker that finished first left the same binary, which this one replaces.
  await rename(tmp, bin);
  await rm(src, { force: true });
  return bin;
}

const sha256 = (data: Buffer | string) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export interface StaticImage {
  /** `host:port/name:tag` */
  reference: string;
  digest: string;
}

/**
 * Pushes a one-layer image holding `binary` as /<name> (its entrypoint) to a plain-HTTP registry.
 * `registryHost` is `127.0.0.1:PORT`.
 */
export async function pushStaticImage(
  registryHost: string,
  name: string,
  tag: string,
  binary: string,
  args: string[] = [],
): Promise<StaticImage> {
  // Two test files pushing the same image at once race in the registry's blob store: its manifest
  // PUT then answers 400 "blob unknown" for a blob both uploaded (seen once in a full run). The
  // push is the same content each time, so it is simply made again, a few times at most.
  for (let attempt = 1; ; attempt++) {
    try {
      return await pushOnce(registryHost, name, tag, binary, args);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof Error) || !/HTTP 400/.test(error.message)) throw error;
    }
  }
}

async function pushOnce(
  registryHost: string,
  name: string,
  tag: string,
  binary: string,
  args: string[],
): Promise<StaticImage> {
  const work = await mkdtemp(join(tmpdir(), 'static-image-'));
  try {
    const file = name.split('/').pop()!;
    await writeFile(join(work, file), await readFile(binary), { mode: 0o755 });
    // Uncompressed layer: its digest is its diff id, and containerd takes it as it is.
    const layer = await new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      tar
        .create({ cwd: work, portable: true, noMtime: true }, [file])
        .on('data', (c: Buffer) => chunks.push(c))
        .on('end', () => resolve(Buffer.concat(chunks)))
        .on('error', reject);
    });
    const config = Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: { Entrypoint: [`/${file}`], Cmd: args },
        rootfs: { type: 'layers', diff_ids: [sha256(layer)] },
      }),
    );
    const base = `http://${registryHost}`;
    const upload = async (blob: Buffer) => {
      const started = await httpRequest({
        url: new URL(`/v2/${name}/blobs/uploads/`, base),
        method: 'POST',
        timeoutMs: 10_000,
      });
      if (started.status !== 202)
        throw new Error(`registry ${registryHost}: blob upload refused (HTTP ${started.status})`);
      const location = new URL(String(started.headers.location), base);
      location.searchParams.set('digest', sha256(blob));
      const put = await httpRequest({
        url: location,
        method: 'PUT',
        headers: { 'Content-Type': 'application/octet-stream' },
        body: blob,
        timeoutMs: 30_000,
      });
      if (put.status !== 201)
        throw new Error(`registry ${registryHost}: blob PUT HTTP ${put.status} ${put.body.toString()}`);
    };
    await upload(layer);
    await upload(config);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: sha256(layer), size: layer.length }],
    });
    const put = await httpRequest({
      url: new URL(`/v2/${name}/manifests/${tag}`, base),
      method: 'PUT',
      headers: { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json' },
      body: manifest,
      timeoutMs: 10_000,
    });
    if (put.status !== 201)
      throw new Error(`registry ${registryHost}: manifest PUT HTTP ${put.status} ${put.body.toString()}`);
    return { reference: `${registryHost}/${name}:${tag}`, digest: sha256(manifest) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
