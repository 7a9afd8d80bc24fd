// The installer process serves helm's post-renderer slot itself. What helm runs there is a few
// lines of sh (the shim), not a second Node process: a Node post-renderer cost every install with
// --registry a process start (~0.1 s, most of it CPU on the core helm needs) and its own fixed
// memory (about 50 MB: Node's binary pages and heap, the YAML library compiled again) on top of
// the installer's, which already runs Node with that very code loaded.
//
// One request: the shim writes helm's stream to a file of its own request directory, makes a
// FIFO there (`done`), writes the directory's path on the host's request FIFO, and reads the
// exit code from `done`; the host rewrites `in` into `out` (and `err`), then writes the code.
// The host holds its request FIFO and each `done` open read-write (on Linux that never blocks,
// and keeps a writer on it): the shim's opens do not block while the installer lives, and a read
// from `done` ends (end of file: the shim fails, helm stops before it writes anything) when the
// installer dies. The shim checks that the installer lives before it asks.
import { execFile } from 'node:child_process';
import { closeSync, createReadStream, openSync, writeFileSync, writeSync, type ReadStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ExitCode, InstallerError } from '../errors.js';

/** Helm refuses empty post-renderer output; a chart that renders nothing is not our failure. */
export const EMPTY_STREAM = '# helm-installer: the chart rendered no manifests\n';

/** What a request's rewrite returns: the shim's exit code, and what it prints on stderr. */
export interface ServedRequest {
  exitCode: number;
  stderr: string;
}

/** Rewrites `input` (helm's stream) by calling `write` with each output chunk in order. */
export type ServeRequest = (input: AsyncIterable<Uint8Array>, write: (chunk: string | Uint8Array) => void) => Promise<ServedRequest>;

export interface PostRenderHost {
  /** The sh script helm runs as its post-renderer (executable; helm 4 runs it with /bin/sh). */
  shim: string;
  /** Stops taking requests and closes what it holds; a request still being served finishes. */
  dispose(): void;
}

export async function startPostRenderHost(dir: string, serve: ServeRequest, pid: number = process.pid): Promise<PostRenderHost> {
  const requests = join(dir, 'requests');
  const shim = join(dir, 'post-render.sh');
  writeFileSync(shim, shimScript(dir, requests, pid), { mode: 0o700 });
  try {
    await promisify(execFile)('mkfifo', ['-m', '600', requests]);
  } catch (error) {
    throw new InstallerError(ExitCode.internal, `cannot make the post-renderer's FIFO ${requests}: ${(error as Error).message}`, {
      hint: 'The installer needs mkfifo (coreutils) and a writable temporary directory (TMPDIR).',
    });
  }
  const held = new Set<number>();
  const listener = new Socket({ fd: openSync(requests, 'r+'), readable: true, writable: false });
  // Waiting for helm must not keep the process alive on its own.
  listener.unref();
  let pending = '';
  listener.on('data', (data: Buffer) => {
    pending += data.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith(`${dir}/`)) void answer(line, serve, held);
  });
  listener.on('error', () => undefined);
  return {
    shim,
    dispose: () => {
      listener.destroy();
      for (const fd of held) closeSync(fd);
      held.clear();
    },
  };
}

/** Serves one request; never throws (a failure is the shim's exit 1 with a message). */
async function answer(requestDir: string, serve: ServeRequest, held: Set<number>): Promise<void> {
  let done: number;
  try {
    done = openSync(join(requestDir, 'done'), 'r+');
  } catch {
    return; // The shim is gone (helm stopped): nobody to answer.
  }
  held.add(done);
  let code = 1;
  let input: ReadStream | undefined;
  let out: number | undefined;
  try {
    // Opened here, not by the stream: a request whose shim is gone fails in this try.
    input = createReadStream('', { fd: openSync(join(requestDir, 'in'), 'r'), highWaterMark: 64 * 1024 });
    out = openSync(join(requestDir, 'out'), 'wx', 0o600);
    const to = out;
    const served = await serve(input, (chunk) => {
      if (typeof chunk === 'string') writeSync(to, chunk);
      else writeSync(to, chunk);
    });
    if (served.stderr) writeFileSync(join(requestDir, 'err'), served.stderr);
    code = served.exitCode;
  } catch (error) {
    try {
      writeFileSync(join(requestDir, 'err'), `helm-installer post-render: ${(error as Error).message}\n`);
    } catch {
      // The request directory is gone with its shim.
    }
  } finally {
    input?.destroy();
    if (out !== undefined) closeSync(out);
  }
  // Disposed meanwhile (its fd closed, the number perhaps reused): the shim has read end of file.
  if (held.has(done)) writeSync(done, `${code}\n`);
}

/** Pure: the sh helm runs. The paths are the run's own (no quote or newline in them). */
export function shimScript(dir: string, requests: string, pid: number): string {
  for (const p of [dir, requests]) {
    if (/['\n]/.test(p)) {
      throw new InstallerError(ExitCode.internal, `the post-renderer cannot use the path ${JSON.stringify(p)}`, { hint: 'Set TMPDIR to a plain path.' });
    }
  }
  const say = (text: string) => `echo 'helm-installer post-render: ${text}' >&2`;
  return [
    '#!/bin/sh',
    '# Written by helm-installer: helm runs this as its post-renderer. The installer process',
    "# (pid below) rewrites the stream: helm's stream goes to a file, the request over a FIFO.",
    `d=$(mktemp -d '${dir}/request.XXXXXX') || exit 1`,
    `trap 'rm -rf "$d"' EXIT`,
    'cat > "$d/in" || exit 1',
    'mkfifo -m 600 "$d/done" || exit 1',
    `kill -0 ${pid} 2>/dev/null || { ${say(`the installer (pid ${pid}) is not running`)}; exit 1; }`,
    `echo "$d" > '${requests}' || exit 1`,
    `read code < "$d/done" || { ${say('the installer stopped before the rewrite ended')}; exit 1; }`,
    '[ -s "$d/err" ] && cat "$d/err" >&2',
    '[ "$code" = 0 ] || exit 1',
    'cat "$d/out"',
    '',
  ].join('\n');
}

// Helm 4 checks it is semver; it is ours, not the product's version.
const PLUGIN_VERSION = '1.0.0';

/** A post-renderer slot served by this process. */
export interface HostedPostRenderer {
  /** Append to `helm upgrade|install|template`. */
  helmArgs: string[];
  /** Add to helm's environment. */
  env: Record<string, string>;
  /** The sh script helm runs (helm 3: directly; helm 4: through the plugin). */
  shim: string;
  /** Stops serving helm's post-renders (once no helm of this run renders any more). */
  dispose(): void;
}

/** Serves helm's post-renderer slot in this process with `serve`, under the helm 4 plugin name `plugin`. */
export async function hostPostRenderer(o: { workDir: string; helmMajor: 3 | 4; plugin: string }, serve: ServeRequest): Promise<HostedPostRenderer> {
  await mkdir(o.workDir, { recursive: true });
  const host = await startPostRenderHost(o.workDir, serve);
  if (o.helmMajor === 3) return { helmArgs: ['--post-renderer', host.shim], env: {}, shim: host.shim, dispose: host.dispose };
  const pluginsDir = join(o.workDir, 'plugins');
  const pluginDir = join(pluginsDir, o.plugin);
  await mkdir(pluginDir, { recursive: true });
  await writeFile(join(pluginDir, 'plugin.yaml'), pluginYaml(host.shim, o.plugin), 'utf8');
  return { helmArgs: ['--post-renderer', o.plugin], env: { HELM_PLUGINS: pluginsDir }, shim: host.shim, dispose: host.dispose };
}

/**
 * Helm 4 splits `command` on spaces and expands `$VAR` in command and args (os.Expand), with no
 * escape for either; a path that would be mangled is refused rather than run as something else.
 * JSON is YAML: no YAML library is loaded for it.
 */
export function pluginYaml(shim: string, name: string): string {
  if (shim.includes('$')) {
    throw new InstallerError(ExitCode.internal, `Helm 4 would expand "$" in the post-renderer path ${shim}`, {
      hint: 'Set TMPDIR to a path without "$".',
    });
  }
  // Only fields helm 4's MetadataV1 knows: it decodes plugin.yaml strictly (KnownFields) and
  // skips a plugin it cannot load without saying why ("plugin not found").
  return `${JSON.stringify({
    apiVersion: 'v1',
    name,
    version: PLUGIN_VERSION,
    type: 'postrenderer/v1',
    runtime: 'subprocess',
    runtimeConfig: { platformCommand: [{ command: '/bin/sh', args: [shim] }] },
  })}\n`;
}
