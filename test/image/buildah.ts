// buildah with its own storage under the cache root (never the machine's /var/lib/containers),
// chroot isolation (no user namespaces or runtime needed for RUN steps) and the overlay driver
// when the kernel allows it (vfs otherwise: slower, copies every layer).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { cacheRoot } from '../cluster/paths.js';

const BUILDAH = '/usr/bin/buildah';

function buildahStorage() {
  const root = join(cacheRoot(), 'containers');
  return { root: join(root, 'storage'), runroot: join(root, 'run'), driver: process.env.STORAGE_DRIVER || 'overlay' };
}

function globalArgs(): string[] {
  const s = buildahStorage();
  return ['--root', s.root, '--runroot', s.runroot, '--storage-driver', s.driver];
}

function buildahEnv(): Record<string, string> {
  return { BUILDAH_ISOLATION: 'chroot', STORAGE_DRIVER: buildahStorage().driver };
}

export function checkBuildah(): void {
  if (!existsSync(BUILDAH)) throw new Error(`buildah not found at ${BUILDAH}: apt-get install buildah`);
}

/** Runs buildah and returns its stdout; throws with its stderr when it fails. */
export async function buildah(args: string[], opts: { input?: string } = {}): Promise<string> {
  const result = await execa(BUILDAH, [...globalArgs(), ...args], {
    env: buildahEnv(),
    reject: false,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
  if (result.exitCode !== 0)
    throw new Error(
      `buildah ${args[0]} failed (exit ${result.exitCode}): ${String(result.stderr).trim().split('\n').slice(-15).join('\n')}`,
    );
  return String(result.stdout).trim();
}

/** buildah with its output streamed to `line` (for the long steps: bud, push). */
export function buildahStreaming(args: string[], line: (text: string) => void): ResultPromise {
  const child = execa(BUILDAH, [...globalArgs(), ...args], {
    env: buildahEnv(),
    all: true,
    buffer: false,
    reject: false,
  });
  child.all?.setEncoding('utf8');
  let rest = '';
  child.all?.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) line(l);
  });
  child.all?.on('end', () => rest && line(rest));
  return child;
}

/** True when buildah's storage holds an image by that name. */
export async function imageExists(name: string): Promise<boolean> {
  const result = await execa(
    BUILDAH,
    [...globalArgs(), 'inspect', '--type', 'image', '--format', '{{.FromImageID}}', name],
    { env: buildahEnv(), reject: false },
  );
  return result.exitCode === 0;
}
