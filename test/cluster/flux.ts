// Flux's source-controller and kustomize-controller, run out of cluster against the local API
// server, for the proof that what `export` writes is what Flux applies. ensureFluxBinaries()
// builds them (build-binaries.sh flux) when missing; startFlux() installs the CRDs and starts
// both controllers as child processes, with their logs in one folder printed on failure.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { freeLoopbackPorts } from './control-plane.js';
import { httpStatus } from './http-probe.js';
import { conditionOf, getJson, kubectl, resolveKubeconfig, waitFor } from './kube.js';
import { acquireLock } from './lock.js';
import { buildScriptPath, cacheRoot, pinnedFluxVersions, type FluxVersions } from './paths.js';
import { logTail, stopProcesses, waitAlive, type ComponentProcess } from './processes.js';

export interface FluxPaths {
  sourceController: string;
  kustomizeController: string;
  /** One folder of CRD YAML files each (copied from the modules, or generated for HelmRelease). */
  crdDirs: string[];
  /** The generated HelmRelease CRD's folder (one of crdDirs). */
  helmReleaseCrdDir: string;
}

function fluxPaths(versions: FluxVersions = pinnedFluxVersions()): FluxPaths {
  const bin = join(cacheRoot(), 'bin');
  const crds = join(cacheRoot(), 'flux-crds');
  const helmReleaseCrdDir = join(crds, `helm-controller-api-${versions.helmControllerApi}`);
  return {
    sourceController: join(bin, `source-controller-${versions.sourceController}`),
    kustomizeController: join(bin, `kustomize-controller-${versions.kustomizeController}`),
    crdDirs: [
      join(crds, `source-controller-${versions.sourceController}`),
      join(crds, `kustomize-controller-${versions.kustomizeController}`),
      helmReleaseCrdDir,
    ],
    helmReleaseCrdDir,
  };
}

const quiet = () => {};
/** Longer than a cold build on a busy 2-core machine (about 20 minutes measured). */
const BUILD_LOCK_WAIT_MS = 60 * 60_000;

/** Builds what is missing, under a lock so two test runs never build the same thing at once. */
export async function ensureFluxBinaries(log: (line: string) => void = quiet): Promise<FluxPaths> {
  const paths = fluxPaths();
  const present = () =>
    [paths.sourceController, paths.kustomizeController, ...paths.crdDirs].every((p) => existsSync(p));
  if (present()) return paths;
  const release = await acquireLock('flux-build', log, BUILD_LOCK_WAIT_MS);
  try {
    if (present()) return paths; // built by whoever held the lock
    log(
      'Flux binaries or CRDs missing: running build-binaries.sh flux (slow the first time: Go 1.27 and every module are fetched and compiled)',
    );
    const began = Date.now();
    const build = execa('bash', [buildScriptPath(), 'flux'], {
      env: { HELM_INSTALLER_CACHE: cacheRoot() },
      all: true,
      buffer: false,
      reject: false,
    });
    for await (const line of build.iterable({ from: 'all' }))
      if (!String(line).startsWith('go: downloading')) log(String(line));
    const result = await build;
    if (result.exitCode !== 0)
      throw new Error(`build-binaries.sh flux failed (exit ${result.exitCode}); its output is above`);
    if (!present()) throw new Error(`build-binaries.sh flux finished but something is missing in ${cacheRoot()}`);
    log(`Flux built in ${Math.round((Date.now() - began) / 1000)} s`);
    return paths;
  } finally {
    release();
  }
}

export interface RunningFlux {
  /** Folder of source-controller.log and kustomize-controller.log. */
  logDir: string;
  /** Ends both controllers and removes the temp dirs; keepLogs leaves logDir (a test failed). */
  stop(opts?: { keepLogs?: boolean }): Promise<void>;
}

export interface StartFluxOptions {
  kubeconfig?: string;
  log?: (line: string) => void;
  /** Controller log level (debug shows each reconcile). Default info. */
  logLevel?: 'debug' | 'info' | 'error';
}

/** Installs the CRDs, starts both controllers and waits until both report healthy. */
export async function startFlux(opts: StartFluxOptions = {}): Promise<RunningFlux> {
  const log = opts.log ?? quiet;
  const kubeconfig = resolveKubeconfig(opts.kubeconfig);
  const paths = await ensureFluxBinaries(log);
  await installCrds(paths, kubeconfig);
  const workDir = await mkdtemp(join(tmpdir(), 'helm-installer-flux-'));
  const logDir = await mkdtemp(join(tmpdir(), 'helm-installer-flux-logs-'));
  const procs: ComponentProcess[] = [];
  const stop = async ({ keepLogs = false } = {}) => {
    await stopProcesses(procs);
    await rm(workDir, { recursive: true, force: true });
    if (!keepLogs) await rm(logDir, { recursive: true, force: true });
  };
  try {
    const ports = await freeLoopbackPorts(5);
    await mkdir(join(workDir, 'artifacts')); // source-controller wants its storage path to exist
    const common = [
      '--enable-leader-election=false',
      '--watch-all-namespaces=true',
      `--log-level=${opts.logLevel ?? 'info'}`,
    ];
    procs.push(
      await startController(
        'source-controller',
        paths.sourceController,
        [...common, ...sourceArgs(ports, workDir)],
        logDir,
        kubeconfig,
      ),
    );
    procs.push(
      await startController(
        'kustomize-controller',
        paths.kustomizeController,
        [...common, ...kustomizeArgs(ports)],
        logDir,
        kubeconfig,
      ),
    );
    const healthy = async () =>
      (await Promise.all([ports[1], ports[4]].map((p) => httpStatus(`http://127.0.0.1:${p}/readyz`)))).every(
        (s) => s === 200,
      );
    await waitAlive('Flux controllers', procs, healthy, 120_000);
    log(`Flux running (logs in ${logDir})`);
    return { logDir, stop };
  } catch (error) {
    const tails = procs.map((p) => `--- ${p.log}\n${logTail(p, 20)}`).join('\n');
    await stop({ keepLogs: true });
    throw new Error(`Flux did not start: ${(error as Error).message}\n${tails}`, { cause: error });
  }
}

export const KUSTOMIZATION = 'kustomizations.kustomize.toolkit.fluxcd.io';

/** Waits until every named Kustomization in `namespace` is Ready (at `revision`, when given); returns the seconds it took. */
export async function kustomizationsReady(o: {
  kubeconfig: string;
  namespace: string;
  names: string[];
  revision?: string;
  intervalMs?: number;
}): Promise<number> {
  const began = Date.now();
  await waitFor(
    `Kustomizations ${o.names.join(', ')} Ready`,
    async () => {
      const list = await getJson<{
        items: { metadata: { name: string }; status?: { lastAppliedRevision?: string; conditions?: [] } }[];
      }>(['get', KUSTOMIZATION], { kubeconfig: o.kubeconfig, namespace: o.namespace });
      const done = list.items.filter(
        (k) =>
          conditionOf(k, 'Ready')?.status === 'True' && (!o.revision || k.status?.lastAppliedRevision === o.revision),
      );
      return o.names.every((n) => done.some((k) => k.metadata.name === n)) ? true : undefined;
    },
    { timeoutMs: 360_000, intervalMs: o.intervalMs ?? 1000 },
  );
  return (Date.now() - began) / 1000;
}

/** Every CRD the controllers serve, and the HelmRelease one, server-side so re-runs are no-ops. */
async function installCrds(paths: FluxPaths, kubeconfig: string): Promise<void> {
  const files = paths.crdDirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => join(dir, f)),
  );
  const args = files.flatMap((f) => ['-f', f]);
  await kubectl(['apply', '--server-side', '--force-conflicts', ...args], { kubeconfig });
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', ...args], { kubeconfig });
}

type Ports = number[];

/**
 * One controller, its output in logDir/<name>.log. Flux's controllers take no --kubeconfig flag:
 * controller-runtime reads $KUBECONFIG. No leader election: one replica, and no Lease to clean up.
 */
async function startController(
  name: string,
  bin: string,
  args: string[],
  logDir: string,
  kubeconfig: string,
): Promise<ComponentProcess> {
  await mkdir(logDir, { recursive: true });
  const log = join(logDir, `${name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(bin, args, { stdio: ['ignore', fd, fd], env: { ...process.env, KUBECONFIG: kubeconfig } });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (error) => reject(new Error(`cannot start ${name} (${bin}): ${error.message}`)));
      child.once('spawn', () => resolve(child.pid!));
    });
    child.unref(); // stop() ends it; the test worker must not wait on it to exit
    return { name, pid, bin, log };
  } finally {
    closeSync(fd);
  }
}

// Ports: [0] source metrics, [1] source health, [2] artifact server, [3] kustomize metrics, [4] kustomize health.
// The artifact server is advertised on loopback, where kustomize-controller (also out of cluster) fetches from it.
function sourceArgs(ports: Ports, workDir: string): string[] {
  return [
    `--metrics-addr=127.0.0.1:${ports[0]}`,
    `--health-addr=127.0.0.1:${ports[1]}`,
    `--storage-addr=127.0.0.1:${ports[2]}`,
    `--storage-adv-addr=127.0.0.1:${ports[2]}`,
    `--storage-path=${join(workDir, 'artifacts')}`,
  ];
}

function kustomizeArgs(ports: Ports): string[] {
  return [`--metrics-addr=127.0.0.1:${ports[3]}`, `--health-addr=127.0.0.1:${ports[4]}`];
}
