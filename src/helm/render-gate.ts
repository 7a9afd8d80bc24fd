// The render gate: helm 4's post-renderer slot used as a checkpoint, so that `helm upgrade
// --install` can start before the installer's own checks instead of after them. Helm renders the
// chart (what it will apply, hooks included: helm 4 post-renders those too), hands the stream to
// the gate and waits; the installer reads that stream, checks it (the RBAC preflight) and takes
// the release Lease meanwhile, then lets helm go on or stops it. Stopped there, helm has written
// nothing: install and upgrade store the release only after the post-render (helm 4.1
// pkg/action/install.go and upgrade.go), and install creates crds/ before it renders, which is why
// the caller starts a first install this way only when every CRD of the chart exists already.
//
// The gate is a few lines of sh, not a second Node process: it writes helm's stream to a file,
// says "ready" on one FIFO and reads the verdict from another. The installer holds both FIFOs
// open read-write (on Linux that never blocks and keeps a writer on each) until helm has ended,
// so the gate's opens never block while the installer lives; a gate whose installer is gone
// (checked before it opens the verdict) or dies while it waits (end of file) fails, which stops
// helm before it writes anything: no helm is left waiting for a verdict that cannot come.
import { execFile } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ExitCode, InstallerError } from '../errors.js';

export const RENDER_GATE_PLUGIN = 'helm-installer-gate';

export interface RenderGate {
  /** Append to `helm upgrade` (helm 4 only). */
  helmArgs: string[];
  /** Add to helm's environment. */
  env: Record<string, string>;
  /** What helm rendered, once it reaches the gate (never settles when helm fails before). */
  reached: Promise<string>;
  /** Let helm go on with what it rendered. */
  open(): void;
  /** Stop helm at the gate: its post-renderer fails and helm exits having written nothing. */
  stop(): void;
  /** Stops a helm still waiting, and closes the FIFOs. */
  dispose(): void;
}

/**
 * `workDir`: a private directory of this run. Helm 4 only (helm 3 does not post-render hooks).
 * The FIFOs are made while helm starts (mkfifo is a process: ~3 ms not spent before helm's
 * spawn); helm reaches the gate only after rendering (100 ms and more), and a gate that finds no
 * FIFO fails, which stops helm before it writes anything.
 */
export function prepareRenderGate(workDir: string): RenderGate {
  const dir = join(workDir, 'gate');
  const pluginDir = join(dir, 'plugins', RENDER_GATE_PLUGIN);
  mkdirSync(pluginDir, { recursive: true });
  const ready = join(dir, 'ready');
  const verdict = join(dir, 'verdict');
  const rendered = join(dir, 'rendered.yaml');
  const script = join(dir, 'gate.sh');
  writeFileSync(script, gateScript(rendered, ready, verdict), 'utf8');
  chmodSync(script, 0o700);
  writeFileSync(join(pluginDir, 'plugin.yaml'), gatePluginYaml(script), 'utf8');

  let disposed = false;
  let word: 'go' | 'stop' | undefined;
  let verdictFd: number | undefined;
  let listener: Socket | undefined;
  const say = () => {
    if (word !== undefined && verdictFd !== undefined) writeSync(verdictFd, `${word}\n`);
  };
  // On the next turn of the event loop: the caller spawns helm first.
  const made = new Promise<void>((resolve) => setImmediate(resolve)).then(() => promisify(execFile)('mkfifo', ['-m', '600', ready, verdict]));
  const opened = made.then(
    () => {
      if (disposed) return;
      verdictFd = openSync(verdict, 'r+');
      listener = new Socket({ fd: openSync(ready, 'r+'), readable: true, writable: false });
      // Waiting for helm must not keep the process alive on its own.
      listener.unref();
      say();
      return listener;
    },
    (error: Error) => {
      throw new InstallerError(ExitCode.internal, `cannot make the render gate's FIFOs in ${dir}: ${error.message}`, {
        hint: 'The installer needs mkfifo (coreutils) and a writable temporary directory (HELM_INSTALLER_TMPDIR).',
      });
    },
  );
  const reached = opened.then(
    (socket) =>
      new Promise<string>((resolve, reject) => {
        socket?.once('data', () => {
          try {
            resolve(readFileSync(rendered, 'utf8'));
          } catch (error) {
            reject(error);
          }
        });
        socket?.once('error', reject);
      }),
  );
  reached.catch(() => undefined);
  const decide = (w: 'go' | 'stop') => {
    if (word !== undefined) return;
    word = w;
    say();
  };
  return {
    helmArgs: ['--post-renderer', RENDER_GATE_PLUGIN],
    env: { HELM_PLUGINS: join(dir, 'plugins') },
    reached,
    open: () => decide('go'),
    stop: () => decide('stop'),
    dispose: () => {
      if (disposed) return;
      decide('stop');
      disposed = true;
      listener?.destroy();
      if (verdictFd !== undefined) closeSync(verdictFd);
    },
  };
}

/** Pure: the sh the plugin runs. The paths are the run's own (no quotes or newlines in them). */
export function gateScript(rendered: string, ready: string, verdict: string, installerPid: number = process.pid): string {
  for (const p of [rendered, ready, verdict]) {
    if (/['\n]/.test(p)) throw new InstallerError(ExitCode.internal, `the render gate cannot use the path ${JSON.stringify(p)}`, { hint: 'Set HELM_INSTALLER_TMPDIR to a plain path.' });
  }
  return [
    '#!/bin/sh',
    "# Written by helm-installer: helm 4 runs this as its post-renderer. It keeps helm's stream,",
    '# tells the installer, and passes the stream on only if the installer says go.',
    `cat > '${rendered}' || exit 1`,
    `[ -p '${ready}' ] && [ -p '${verdict}' ] || exit 1`,
    // Read-write: never blocks. Kept open until the verdict, so "ready" stays in the FIFO for an
    // installer that opens it a moment later.
    `exec 3<>'${ready}'`,
    'echo ready >&3',
    // Opening the verdict FIFO blocks while it has no writer, which is only once the installer
    // is gone: so first make sure it lives. End of file (no verdict) when it dies after that.
    `kill -0 ${installerPid} 2>/dev/null || exit 1`,
    `read word < '${verdict}' || exit 1`,
    'exec 3>&-',
    '[ "$word" = go ] || exit 1',
    `exec cat '${rendered}'`,
    '',
  ].join('\n');
}

/** helm 4's postrenderer/v1 plugin running the gate with sh (helm splits `command` on spaces). */
function gatePluginYaml(script: string): string {
  if (/[\s$]/.test(script)) {
    throw new InstallerError(ExitCode.internal, `Helm 4 cannot run a plugin from a path with a space or "$": ${script}`, { hint: 'Set HELM_INSTALLER_TMPDIR to a path without them.' });
  }
  // JSON is YAML, and needs no YAML library loaded before helm can start.
  return `${JSON.stringify({
    apiVersion: 'v1',
    name: RENDER_GATE_PLUGIN,
    version: '1.0.0',
    type: 'postrenderer/v1',
    runtime: 'subprocess',
    runtimeConfig: { platformCommand: [{ command: '/bin/sh', args: [script] }] },
  })}\n`;
}
