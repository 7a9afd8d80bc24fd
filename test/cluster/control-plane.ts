// A real Kubernetes control plane of plain processes (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, KWOK), for integration tests and the demo.
// ensureCluster() reuses a healthy running cluster or starts one; the processes are detached,
// so `cluster:up` can exit and leave them running; stopCluster() stops exactly the recorded pids.
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { bootstrapManifest, FAKE_NODE_NAME } from './bootstrap-objects.js';
import { createCertificates, writeAdminKubeconfig } from './certs.js';
import {
  apiserverArgs,
  controllerManagerArgs,
  etcdArgs,
  KUBERNETES_SERVICE_IP,
  kwokArgs,
  schedulerArgs,
  type Ports,
} from './components.js';
import { httpStatus } from './http-probe.js';
import { applyYaml, conditionOf, getJson, kubectl } from './kube.js';
import { writeKwokConfig } from './kwok-stages.js';
import { withLock } from './lock.js';
import { ensureDebianPackages } from '../setup/debian-packages.js';
import { topUpVolumePool } from './volume-pool.js';
import { realNodeHealthy, startRealNode, stopRealNode } from './real-node.js';
import { addTestRun, keepRunning, liveTestRuns, removeTestRun } from './usage.js';
import {
  binaryPaths,
  buildScriptPath,
  cacheRoot,
  pinnedVersions,
  statePaths,
  type BinaryPaths,
  type StatePaths,
} from './paths.js';
import { isRunning, readPids, startDetached, stopProcesses, waitAlive, writePids, type PidsFile } from './processes.js';

export interface ClusterInfo {
  /** Admin kubeconfig (certificates embedded). */
  kubeconfig: string;
  apiServerUrl: string;
  stateDir: string;
  /** `127.0.0.1:PORT`: the loopback registry the real node pulls from (plain HTTP; push there); '' with HELM_INSTALLER_REAL_NODE=off. */
  registry: string;
  /** The API server's port on 127.0.0.1 (what a hostNetwork pod on the real node connects to). */
  apiServerPort: number;
  /** True when this call started the processes (so its caller may stop them). */
  startedNow: boolean;
}

export interface EnsureClusterOptions {
  /** Progress lines (build output included). Silent by default. */
  log?: (line: string) => void;
  /**
   * 'test-run': register this process as a user; pair with releaseCluster(), which stops the
   * cluster when the last test run leaves, if a test run started it. 'keep': leave the cluster
   * running for good (until stopCluster), whoever started it. Default: neither.
   */
  usage?: 'test-run' | 'keep';
}

const quiet = () => {};

/** Returns a healthy cluster: the running one if there is one, else a freshly started one. */
export async function ensureCluster(opts: EnsureClusterOptions = {}): Promise<ClusterInfo> {
  const log = opts.log ?? quiet;
  return withLock(log, async () => {
    // Cheap when all are there; the registry tests need them even when a cluster is running.
    await ensureDebianPackages(log);
    const info = await reuseOrStart(log);
    if (opts.usage === 'test-run') await addTestRun(info.stateDir, info.startedNow);
    if (opts.usage === 'keep') await keepRunning(info.stateDir);
    return info;
  });
}

/** For a caller of ensureCluster({usage: 'test-run'}) that is done; true when it stopped the cluster. */
export async function releaseCluster(opts: { log?: (line: string) => void } = {}): Promise<boolean> {
  const log = opts.log ?? quiet;
  return withLock(log, async () => {
    const paths = statePaths();
    if (!(await removeTestRun(paths.stateDir))) return false;
    await stopRecorded(paths, log);
    return true;
  });
}

async function reuseOrStart(log: (line: string) => void): Promise<ClusterInfo> {
  const paths = statePaths();
  const previous = await readPids(paths.pids);
  const pinned = pinnedVersions();
  const sameVersions = (['kubernetes', 'etcd', 'kwok'] as const).every((k) => previous?.versions[k] === pinned[k]);
  if (previous && !sameVersions) log('the running cluster has other versions than the pinned ones: replacing it');
  if (previous && sameVersions && (await isHealthy(previous, paths))) {
    log(`reusing the cluster at ${previous.apiServerUrl} (state in ${paths.stateDir})`);
    // A cluster started by an older checkout lacks what the bootstrap has gained since.
    await applyYaml(bootstrapManifest(), { kubeconfig: paths.kubeconfig });
    const added = await topUpVolumePool(paths.kubeconfig);
    if (added) log(`added ${added} PersistentVolumes to the pool (claims left behind hold the others)`);
    // A cluster started before the real node existed (or whose node died) gets one added in place.
    await ensureRealNode(paths, previous, log);
    return clusterInfo(paths, previous, false);
  }
  if (previous) {
    if (sameVersions) log('the recorded cluster is not healthy: stopping what is left of it');
    await stopRealNode(paths.node, previous.node, log);
    await stopProcesses(previous.components);
  }
  const bins = await ensureBinaries(log);
  const record = await startCluster(paths, bins, log);
  await ensureRealNode(paths, record, log);
  return clusterInfo(paths, record, true);
}

function clusterInfo(paths: StatePaths, record: PidsFile, startedNow: boolean): ClusterInfo {
  return {
    kubeconfig: paths.kubeconfig,
    apiServerUrl: record.apiServerUrl,
    apiServerPort: Number(new URL(record.apiServerUrl).port),
    registry: record.node?.registry ?? '',
    stateDir: paths.stateDir,
    startedNow,
  };
}

/**
 * HELM_INSTALLER_REAL_NODE=off: a second cluster (its own HELM_INSTALLER_CACHE) for experiments
 * with the control plane, without a second kubelet: the real node uses machine-wide places
 * (/var/log/containers, CNI, iptables) that the first cluster's node already holds.
 */
export function realNodeWanted(): boolean {
  return process.env.HELM_INSTALLER_REAL_NODE !== 'off';
}

/** Reuses the recorded real node when it is healthy, else (re)starts it; the record is saved as it goes. */
async function ensureRealNode(paths: StatePaths, record: PidsFile, log: (line: string) => void): Promise<void> {
  if (!realNodeWanted()) {
    log('HELM_INSTALLER_REAL_NODE=off: no real node (only the KWOK node)');
    return;
  }
  if (await realNodeHealthy(record.node, paths.kubeconfig)) return;
  if (record.node) log('the real node is not healthy: restarting it');
  await stopRealNode(paths.node, record.node, log);
  delete record.node;
  await writePids(paths.pids, record);
  const bins = await ensureBinaries(log);
  const [registry, kubelet] = await freeLoopbackPorts(2);
  try {
    record.node = await startRealNode({
      paths: paths.node,
      bins,
      kubeconfig: paths.kubeconfig,
      logDir: paths.logs,
      ports: { registry: registry!, kubelet: kubelet! },
      record: async (node) => {
        record.node = node;
        await writePids(paths.pids, record);
      },
      log,
    });
    await writePids(paths.pids, record);
  } catch (error) {
    // The control plane stays (others may use it); the half-started node goes, its logs stay.
    await stopRealNode(paths.node, record.node, log);
    delete record.node;
    await writePids(paths.pids, record);
    throw error;
  }
}

/** Stops the recorded processes (SIGTERM, then SIGKILL after a grace period) and removes the state dir. */
export async function stopCluster(opts: EnsureClusterOptions = {}): Promise<void> {
  const log = opts.log ?? quiet;
  await withLock(log, async () => {
    const paths = statePaths();
    const users = await liveTestRuns(paths.stateDir);
    if (users.length) log(`note: test runs still use this cluster (pids ${users.join(', ')}); they will fail`);
    await stopRecorded(paths, log);
  });
}

async function stopRecorded(paths: StatePaths, log: (line: string) => void): Promise<void> {
  const recorded = await readPids(paths.pids);
  // The node first: its containers and mounts go before containerd does, and before the state
  // dir is removed (even with no record, whatever is mounted under it is unmounted).
  await stopRealNode(paths.node, recorded?.node, log);
  if (recorded) {
    log(`stopping ${recorded.components.map((c) => `${c.name} (${c.pid})`).join(', ')}`);
    await stopProcesses(recorded.components);
  } else {
    log('no cluster recorded');
  }
  await rm(paths.stateDir, { recursive: true, force: true });
}

async function isHealthy(pids: PidsFile, paths: StatePaths): Promise<boolean> {
  if (!pids.components.length || !pids.components.every(isRunning)) return false;
  return (await httpStatus(`${pids.apiServerUrl}/readyz`, paths)) === 200;
}

/** Builds whatever binary is missing with build-binaries.sh (slow the first time), streaming its output. */
async function ensureBinaries(log: (line: string) => void): Promise<BinaryPaths> {
  const bins = binaryPaths(pinnedVersions());
  const needed = [
    bins.etcd,
    bins.kubeApiserver,
    bins.kubeControllerManager,
    bins.kubeScheduler,
    bins.kubelet,
    bins.kwok,
    `${bins.kwokStages}/pod/fast/pod-ready.yaml`,
  ];
  if (needed.every((p) => existsSync(p))) return bins;
  log('control-plane binaries missing: running test/cluster/build-binaries.sh (10-25 minutes the first time)');
  const build = execa('bash', [buildScriptPath()], {
    env: { HELM_INSTALLER_CACHE: cacheRoot() },
    all: true,
    buffer: false,
    reject: false,
  });
  for await (const line of build.iterable({ from: 'all' })) log(String(line));
  const result = await build;
  if (result.exitCode !== 0) throw new Error(`build-binaries.sh failed (exit ${result.exitCode}); its output is above`);
  const missing = needed.filter((p) => !existsSync(p));
  if (missing.length) throw new Error(`build-binaries.sh finished but these are missing: ${missing.join(', ')}`);
  return bins;
}

async function startCluster(paths: StatePaths, bins: BinaryPaths, log: (line: string) => void): Promise<PidsFile> {
  const began = Date.now();
  await rm(paths.stateDir, { recursive: true, force: true });
  await mkdir(paths.logs, { recursive: true });
  const [etcdClient, etcdPeer, apiserver] = await freeLoopbackPorts(3);
  const ports: Ports = { etcdClient: etcdClient!, etcdPeer: etcdPeer!, apiserver: apiserver! };
  const apiServerUrl = `https://127.0.0.1:${ports.apiserver}`;
  const versions = pinnedVersions();
  const record: PidsFile = {
    apiServerUrl,
    ports: { ...ports },
    versions: { ...versions },
    startedAt: new Date().toISOString(),
    components: [],
  };
  const start = async (name: string, bin: string, args: string[]) => {
    const proc = await startDetached(name, bin, args, paths.logs);
    record.components.push(proc);
    await writePids(paths.pids, record); // recorded at once, so an interrupted start can still be stopped
    return proc;
  };
  try {
    log('writing certificates, kubeconfig and KWOK stages');
    await createCertificates(paths, KUBERNETES_SERVICE_IP);
    await writeAdminKubeconfig(paths, apiServerUrl);
    await writeKwokConfig(bins.kwokStages, paths.kwokConfig);

    log(`starting etcd ${versions.etcd} on 127.0.0.1:${ports.etcdClient}`);
    const etcd = await start('etcd', bins.etcd, etcdArgs(paths, ports));
    await waitAlive(
      'etcd /health',
      [etcd],
      async () => (await httpStatus(`http://127.0.0.1:${ports.etcdClient}/health`)) === 200,
    );

    log(`starting kube-apiserver ${versions.kubernetes} on ${apiServerUrl}`);
    const api = await start('kube-apiserver', bins.kubeApiserver, apiserverArgs(paths, ports));
    await waitAlive(
      'kube-apiserver /readyz',
      [etcd, api],
      async () => (await httpStatus(`${apiServerUrl}/readyz`, paths)) === 200,
      120_000,
    );

    log(`starting kube-controller-manager, kube-scheduler, kwok ${versions.kwok}`);
    await start('kube-controller-manager', bins.kubeControllerManager, controllerManagerArgs(paths));
    await start('kube-scheduler', bins.kubeScheduler, schedulerArgs(paths));
    await start('kwok', bins.kwok, kwokArgs(paths));

    log('creating the fake node, the default StorageClass and IngressClass, and the PersistentVolume pool');
    await applyYaml(bootstrapManifest(), { kubeconfig: paths.kubeconfig });
    await topUpVolumePool(paths.kubeconfig);
    await waitAlive(`node ${FAKE_NODE_NAME} Ready and untainted`, record.components, async () => {
      const node = await getJson(['get', 'node', FAKE_NODE_NAME], { kubeconfig: paths.kubeconfig });
      return conditionOf(node, 'Ready')?.status === 'True' && !node.spec?.taints?.length;
    });
    await waitAlive('ServiceAccount default/default', record.components, async () => {
      const got = await kubectl(['get', 'serviceaccount', 'default', '-n', 'default', '-o', 'name'], {
        kubeconfig: paths.kubeconfig,
        reject: false,
      });
      return got.exitCode === 0;
    });
    log(`control plane ready in ${((Date.now() - began) / 1000).toFixed(1)} s; logs in ${paths.logs}`);
    return record;
  } catch (error) {
    // Leave the state dir (its logs explain the failure); the next ensureCluster starts afresh.
    await stopProcesses(record.components);
    throw error;
  }
}

/** Distinct free TCP ports on 127.0.0.1, all held open until every one is chosen. */
export async function freeLoopbackPorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await sleep(0);
  return ports;
}
