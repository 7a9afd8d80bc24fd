// The installer process serves helm's post-renderer slot itself. What helm runs there is a few
// lines of sh (the shim), not a second Node process: a Node post-renderer cost every install with
// --registry a process start (~0.1 s, most of it CPU on the core helm needs) and its own fixed
// memory (about 50 MB: Node's binary pages and heap, the YAML library compiled again) on top of
// the installer's, which already runs Node with that very code loaded.
//
// One request (the shim's side is shimScript, the host's post-render-request.ts): the shim opens
// an answer FIFO and two files in a request directory of its own and removes the directory at
// once, copies helm's stream into the first file, and writes `<its pid> <request dir>` on the
// host's request FIFO. The host opens those descriptors through /proc, rewrites the stream into
// the second file (or writes its failure message there), then writes the exit code on the answer
// FIFO; the shim prints the file. No wait of the shim is unbounded: the host holds its request
// FIFO open while the process lives and answers every request, a request after dispose() with a
// failure; a watchdog in the shim answers for the installer when its pid is gone.
import { execFile } from 'node:child_process';
import { openSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { HelmTraits } from '../helm/helm-traits.js';
import { SHIM_FDS, ShimRequest, type ServeRequest } from './post-render-request.js';

/** Helm refuses empty post-renderer output; a chart that renders nothing is not our failure. */
export const EMPTY_STREAM = '# helm-installer: the chart rendered no manifests\n';

export interface PostRenderHost {
  /** The sh script helm runs as its post-renderer (executable; helm 4 runs it with /bin/sh). */
  shim: string;
  /** Stops serving: a request in flight fails now, and every later one fails as it comes. */
  dispose(): void;
}

const STOPPED = 'helm-installer post-render: the installer stopped before the rewrite ended\n';
const DISPOSED = 'helm-installer post-render: the installer no longer serves post-renders (its helm run has ended)\n';

export async function startPostRenderHost(
  dir: string,
  serve: ServeRequest,
  pid: number = process.pid,
): Promise<PostRenderHost> {
  // The real path: the one /proc shows for the shim's files, which the host checks (ShimRequest).
  const root = realpathSync(dir);
  const requests = join(root, 'requests');
  const shim = join(dir, 'post-render.sh');
  writeFileSync(shim, shimScript(root, requests, pid), { mode: 0o700 });
  await makeFifo(requests);
  const inFlight = new Set<ShimRequest>();
  let disposed = false;
  listenForRequests(requests, (line) => {
    const request = ShimRequest.open(line, root);
    if (!request || request.isAnswered) return;
    if (disposed) return request.fail(DISPOSED);
    inFlight.add(request);
    void request.serve(serve).finally(() => inFlight.delete(request));
  });
  return {
    shim,
    dispose: () => {
      disposed = true;
      for (const request of inFlight) request.fail(STOPPED);
      inFlight.clear();
    },
  };
}

async function makeFifo(path: string): Promise<void> {
  try {
    await promisify(execFile)('mkfifo', ['-m', '600', path]);
  } catch (error) {
    throw new InstallerError(
      ExitCode.internal,
      `cannot make the post-renderer's FIFO ${path}: ${(error as Error).message}`,
      {
        hint: 'The installer needs mkfifo (coreutils) and a writable temporary directory (TMPDIR).',
      },
    );
  }
}

/**
 * Calls `onLine` with each line written on the request FIFO, for as long as the process lives:
 * held open read-write (on Linux that never blocks, and keeps a writer on it), and never closed,
 * so a shim that asks after dispose() still gets its answer. It does not keep the process alive.
 */
function listenForRequests(requests: string, onLine: (line: string) => void): void {
  const fd = openSync(requests, 'r+');
  // The host reaches each shim's files through /proc: without it, refuse now rather than let a
  // shim wait for an answer that cannot come.
  let viaProc: string | undefined;
  try {
    viaProc = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // Checked below.
  }
  if (viaProc !== requests) {
    throw new InstallerError(
      ExitCode.internal,
      `the post-renderer cannot reach its FIFO through /proc/self/fd (found ${viaProc ?? 'nothing'})`,
      {
        hint: 'The installer needs /proc (mounted in every Kubernetes container).',
      },
    );
  }
  const listener = new Socket({ fd, readable: true, writable: false });
  listener.unref();
  let pending = '';
  listener.on('data', (data: Buffer) => {
    pending += data.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  listener.on('error', () => undefined);
}

/** Pure: the sh helm runs. The paths are the run's own (no quote or newline in them). */
export function shimScript(dir: string, requests: string, pid: number): string {
  for (const p of [dir, requests]) {
    if (/['\n]/.test(p)) {
      throw new InstallerError(ExitCode.internal, `the post-renderer cannot use the path ${JSON.stringify(p)}`, {
        hint: 'Set TMPDIR to a plain path.',
      });
    }
  }
  const { answer, in: input, out } = SHIM_FDS;
  return `#!/bin/sh
# Written by helm-installer: helm runs this as its post-renderer, and the installer process
# (pid ${pid}) rewrites the stream. Its files are opened, then removed at once: the installer
# reaches them through /proc/$$/fd, and nothing of the stream outlives this shell, killed or not.
say() { echo "helm-installer post-render: $1" >&2; }
d=$(mktemp -d '${dir}/request.XXXXXX') || exit 1
trap 'rm -rf "$d"' EXIT
mkfifo -m 600 "$d/answer" || exit 1
exec ${answer}<>"$d/answer" ${input}<>"$d/in" ${out}<>"$d/out"
rm -rf "$d" || exit 1
trap - EXIT
cat >&${input} || exit 1
kill -0 ${pid} 2>/dev/null || { say 'the installer (pid ${pid}) is not running'; exit 1; }
# The watchdog: answers for an installer that ends before it answered; ends with this shell.
# Its stdio is /dev/null, so it never holds helm's pipes open.
(while kill -0 ${pid} && kill -0 $$; do sleep 1; done; echo gone >&${answer}) </dev/null >/dev/null 2>&1 ${input}<&- ${out}<&- &
# Read-write: never blocks, whoever holds the FIFO (the watchdog covers an installer that is gone).
echo "$$ $d" 1<>'${requests}' || exit 1
read -r code <&${answer}
kill $! 2>/dev/null
case $code in
0) exec cat <&${out} ;;
gone) say 'the installer stopped before the rewrite ended' ;;
*) cat <&${out} >&2 ;;
esac
exit 1
`;
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
export async function hostPostRenderer(
  o: { workDir: string; helm: HelmTraits; plugin: string },
  serve: ServeRequest,
): Promise<HostedPostRenderer> {
  await mkdir(o.workDir, { recursive: true });
  const host = await startPostRenderHost(o.workDir, serve);
  if (o.helm.postRenderer === 'executable')
    return { helmArgs: ['--post-renderer', host.shim], env: {}, shim: host.shim, dispose: host.dispose };
  const pluginsDir = join(o.workDir, 'plugins');
  const pluginDir = join(pluginsDir, o.plugin);
  await mkdir(pluginDir, { recursive: true });
  await writeFile(join(pluginDir, 'plugin.yaml'), pluginYaml(host.shim, o.plugin), 'utf8');
  return {
    helmArgs: ['--post-renderer', o.plugin],
    env: { HELM_PLUGINS: pluginsDir },
    shim: host.shim,
    dispose: host.dispose,
  };
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
