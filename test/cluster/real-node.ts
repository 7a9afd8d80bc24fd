// One real node beside the KWOK node (DESIGN.md 6b): Debian's containerd + runc run the pods a
// kubelet (built from the same Kubernetes module as the control plane) is given, and a loopback
// Debian docker-registry is where they pull from (the airgap path of the installer's own image).
// Everything lives under <state>/node and listens on 127.0.0.1; stopRealNode() leaves no
// container, mount or process behind.
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, rm, unlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { httpStatus } from './http-probe.js';
import { conditionOf, getJson } from './kube.js';
import type { BinaryPaths, RealNodePaths } from './paths.js';
import { isRunning, startDetached, stopProcesses, waitAlive, type ComponentProcess } from './processes.js';
import { PAUSE_SOURCE, pushStaticImage, staticBinary } from './static-image.js';

/** The node's name: the API server reaches the kubelet by this Hostname address (loopback). */
export const REAL_NODE_NAME = 'localhost';
/** Label and NoSchedule taint of the real node: only pods that select and tolerate it land there. */
export const REAL_NODE_KEY = 'helm-installer.test/real-node';

const REGISTRY_BINARY = '/usr/bin/docker-registry';
const CONTAINERD = '/usr/bin/containerd';
const CTR = '/usr/bin/ctr';
const RUNC = '/usr/sbin/runc';
const CNI_BIN_DIR = '/usr/lib/cni';
/** The kubelet hard-codes this directory for its per-container log symlinks. */
const CONTAINER_LOG_LINKS = '/var/log/containers';

export interface RealNodeRecord {
  /** `127.0.0.1:PORT` of the loopback registry containerd pulls from (plain HTTP). */
  registry: string;
  kubeletPort: number;
  sandboxImage: string;
  components: ComponentProcess[];
}

/** What a pod spec needs to run on the real node (no kube-proxy, no pod network there). */
export function realNodePlacement(apiServerPort: number) {
  return {
    nodeSelector: { [REAL_NODE_KEY]: 'true' },
    tolerations: [{ key: REAL_NODE_KEY, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
    hostNetwork: true,
    env: [
      { name: 'KUBERNETES_SERVICE_HOST', value: '127.0.0.1' },
      { name: 'KUBERNETES_SERVICE_PORT', value: String(apiServerPort) },
    ],
  };
}

export interface StartRealNodeInput {
  paths: RealNodePaths;
  bins: Pick<BinaryPaths, 'kubelet'>;
  /** The kubeconfig the kubelet uses (the admin one: RBAC-only cluster, no node authorizer). */
  kubeconfig: string;
  logDir: string;
  ports: { registry: number; kubelet: number };
  /** Called whenever a process starts, so an interrupted start can still be stopped. */
  record: (node: RealNodeRecord) => Promise<void>;
  log: (line: string) => void;
}

export async function startRealNode(input: StartRealNodeInput): Promise<RealNodeRecord> {
  const { paths, log } = input;
  const registry = `127.0.0.1:${input.ports.registry}`;
  const node: RealNodeRecord = { registry, kubeletPort: input.ports.kubelet, sandboxImage: '', components: [] };
  const start = async (name: string, bin: string, args: string[]) => {
    const proc = await startDetached(name, bin, args, input.logDir);
    node.components.push(proc);
    await input.record(node);
    return proc;
  };

  await rm(paths.nodeDir, { recursive: true, force: true });
  for (const dir of [
    paths.registryData,
    paths.containerdRoot,
    paths.containerdState,
    paths.cniConfDir,
    paths.kubeletRoot,
    paths.podLogs,
    paths.volumePlugins,
  ]) {
    await mkdir(dir, { recursive: true });
  }

  log(`starting the loopback registry on ${registry}`);
  await writeFile(paths.registryConfig, registryConfig(registry, paths.registryData));
  const reg = await start('registry', REGISTRY_BINARY, ['serve', paths.registryConfig]);
  await waitAlive(
    `registry http://${registry}/v2/`,
    [reg],
    async () => (await httpStatus(`http://${registry}/v2/`)) === 200,
  );

  const pause = await pushStaticImage(registry, 'helm-installer/pause', 'local', await staticBinary(PAUSE_SOURCE));
  node.sandboxImage = pause.reference;

  log('starting containerd');
  await writeContainerdConfig(paths, registry, pause.reference);
  const containerd = await start('containerd', CONTAINERD, ['--config', paths.containerdConfig]);
  await waitAlive(
    'containerd socket',
    [reg, containerd],
    async () => (await execa(CTR, ['--address', paths.containerdSocket, 'version'], { reject: false })).exitCode === 0,
  );

  log(`starting the kubelet (node ${REAL_NODE_NAME}, tainted ${REAL_NODE_KEY}=true:NoSchedule)`);
  await writeFile(paths.kubeletConfig, kubeletConfig(paths, input.ports.kubelet));
  const kubelet = await start('kubelet', input.bins.kubelet, [
    `--config=${paths.kubeletConfig}`,
    `--kubeconfig=${input.kubeconfig}`,
    `--root-dir=${paths.kubeletRoot}`,
    // "nodeIP can't be loopback", but the Hostname address can be: the API server tries it first.
    `--hostname-override=${REAL_NODE_NAME}`,
    `--node-labels=${REAL_NODE_KEY}=true`,
    '--v=1',
  ]);
  await waitAlive(
    `node ${REAL_NODE_NAME} Ready`,
    [reg, containerd, kubelet],
    async () => {
      const n = await getJson(['get', 'node', REAL_NODE_NAME], { kubeconfig: input.kubeconfig });
      return (
        conditionOf(n, 'Ready')?.status === 'True' &&
        (n.spec?.taints ?? []).some((t: { key: string }) => t.key === REAL_NODE_KEY)
      );
    },
    120_000,
  );
  return node;
}

/** True when every process of the node runs, the registry answers and the node is Ready. */
export async function realNodeHealthy(node: RealNodeRecord | undefined, kubeconfig: string): Promise<boolean> {
  if (!node || !node.components.length || !node.components.every(isRunning)) return false;
  if ((await httpStatus(`http://${node.registry}/v2/`).catch(() => 0)) !== 200) return false;
  try {
    const n = await getJson(['get', 'node', REAL_NODE_NAME], { kubeconfig });
    return conditionOf(n, 'Ready')?.status === 'True';
  } catch {
    return false;
  }
}

/**
 * Stops the kubelet, removes every container (through containerd, then runc for stragglers),
 * stops containerd and the registry, kills shims left over, unmounts whatever is left under the
 * node dir and removes the kubelet's log links that point into it. Safe to call on a half-started
 * or already stopped node, and with no record at all (it then cleans by path).
 */
export async function stopRealNode(
  paths: RealNodePaths,
  node: RealNodeRecord | undefined,
  log: (line: string) => void,
): Promise<void> {
  const byName = (name: string) => node?.components.filter((c) => c.name === name) ?? [];
  await stopProcesses(byName('kubelet'));
  if (existsSync(paths.containerdSocket) && byName('containerd').some(isRunning))
    await removeContainers(paths.containerdSocket);
  await forceDeleteRunc(paths.runcRoot);
  await stopProcesses(byName('containerd'));
  await killShims(paths.containerdSocket, log);
  await stopProcesses(node?.components.filter((c) => !['kubelet', 'containerd'].includes(c.name)) ?? []);
  await unmountUnder(paths.nodeDir, log);
  await removeLogLinks(paths.nodeDir);
}

async function removeContainers(socket: string): Promise<void> {
  const ctr = (args: string[]) => execa(CTR, ['--address', socket, ...args], { reject: false, timeout: 30_000 });
  const namespaces = (await ctr(['namespaces', 'list', '-q'])).stdout.split('\n').filter(Boolean);
  for (const ns of namespaces) {
    const tasks = (await ctr(['-n', ns, 'tasks', 'list', '-q'])).stdout.split('\n').filter(Boolean);
    for (const id of tasks) await ctr(['-n', ns, 'tasks', 'kill', '-s', 'SIGKILL', id]);
    for (const id of tasks) {
      for (let i = 0; i < 20 && (await ctr(['-n', ns, 'tasks', 'delete', id])).exitCode !== 0; i++) await sleep(100);
    }
    const containers = (await ctr(['-n', ns, 'containers', 'list', '-q'])).stdout.split('\n').filter(Boolean);
    for (const id of containers) await ctr(['-n', ns, 'containers', 'delete', id]);
  }
}

/** runc state left behind (a container whose shim died) is deleted with its processes. */
async function forceDeleteRunc(runcRoot: string): Promise<void> {
  if (!existsSync(runcRoot)) return;
  for (const ns of readdirSync(runcRoot)) {
    const root = join(runcRoot, ns);
    const list = await execa(RUNC, ['--root', root, 'list', '-q'], { reject: false });
    for (const id of list.stdout.split('\n').filter(Boolean)) {
      await execa(RUNC, ['--root', root, 'delete', '--force', id], { reject: false });
    }
  }
}

/** containerd-shim processes started for this node's containerd (their argv names its socket). */
async function killShims(socket: string, log: (line: string) => void): Promise<void> {
  const shims = findProcesses((argv) => /containerd-shim/.test(argv[0] ?? '') && argv.includes(socket));
  if (!shims.length) return;
  log(`killing ${shims.length} leftover containerd shim(s)`);
  for (const pid of shims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && shims.some((pid) => existsSync(`/proc/${pid}`))) await sleep(50);
}

export function findProcesses(match: (argv: string[]) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (argv.length && match(argv)) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Mount points at or under `dir` (from /proc/self/mountinfo), deepest first. */
export function mountsUnder(dir: string): string[] {
  const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((p) => p === dir || p.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountUnder(dir: string, log: (line: string) => void): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(dir);
    if (!points.length) return;
    if (round === 0) log(`unmounting ${points.length} mount(s) under ${dir}`);
    for (const point of points) {
      const result = await execa('umount', [point], { reject: false });
      if (result.exitCode !== 0) await execa('umount', ['-l', point], { reject: false });
    }
  }
  const left = mountsUnder(dir);
  if (left.length) throw new Error(`cannot unmount ${left.join(', ')}`);
}

async function removeLogLinks(nodeDir: string): Promise<void> {
  if (!existsSync(CONTAINER_LOG_LINKS)) return;
  for (const name of readdirSync(CONTAINER_LOG_LINKS)) {
    const link = join(CONTAINER_LOG_LINKS, name);
    try {
      if (readlinkSync(link).startsWith(`${nodeDir}/`)) await unlink(link);
    } catch {
      // not a link, or gone
    }
  }
}

function registryConfig(address: string, data: string): string {
  return stringify({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: data }, delete: { enabled: true } },
    http: { addr: address, secret: randomBytes(16).toString('hex') },
  });
}

async function writeContainerdConfig(paths: RealNodePaths, registry: string, sandboxImage: string): Promise<void> {
  // Plain HTTP to the loopback registry, the way an airgapped node trusts its local registry.
  const hostDir = join(paths.registryHosts, registry);
  await mkdir(hostDir, { recursive: true });
  await writeFile(
    join(hostDir, 'hosts.toml'),
    `server = "http://${registry}"\n\n[host."http://${registry}"]\n  capabilities = ["pull", "resolve", "push"]\n`,
  );
  // NetworkReady needs a CNI config even though every pod here uses the host network; a
  // loopback-only network makes a pod without hostNetwork fail clearly instead.
  await writeFile(
    join(paths.cniConfDir, '10-loopback.conflist'),
    JSON.stringify({
      cniVersion: '1.0.0',
      name: 'helm-installer-loopback',
      plugins: [{ type: 'loopback' }],
    }),
  );
  const q = JSON.stringify;
  await writeFile(
    paths.containerdConfig,
    `version = 2
root = ${q(paths.containerdRoot)}
state = ${q(paths.containerdState)}
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ${q(paths.containerdSocket)}

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(join(paths.containerdRoot, 'opt'))}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  # This VM refuses a negative oom_score_adj (runc: "can't get final child's PID from pipe").
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(CNI_BIN_DIR)}
    conf_dir = ${q(paths.cniConfDir)}
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${q(paths.runcRoot)}
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ${q(paths.registryHosts)}
`,
  );
}

function kubeletConfig(paths: RealNodePaths, port: number): string {
  return stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: '127.0.0.1',
    port,
    readOnlyPort: 0,
    healthzPort: 0,
    // The API server (no kubelet client cert configured) calls in for logs/exec; loopback only.
    authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: `unix://${paths.containerdSocket}`,
    // cgroup v1 here, no systemd: the plainest cgroup set-up the kubelet accepts.
    failCgroupV1: false,
    cgroupDriver: 'cgroupfs',
    cgroupsPerQOS: false,
    enforceNodeAllocatable: [],
    failSwapOn: false,
    registerNode: true,
    registerWithTaints: [{ key: REAL_NODE_KEY, value: 'true', effect: 'NoSchedule' }],
    podLogsDirectory: paths.podLogs,
    volumePluginDir: paths.volumePlugins,
    resolvConf: '/etc/resolv.conf',
    serializeImagePulls: false,
    maxPods: 30,
    // A shared build machine's disk is whatever it is: no evictions, no image GC of test images.
    evictionHard: {
      'memory.available': '1Mi',
      'nodefs.available': '1%',
      'imagefs.available': '1%',
      'nodefs.inodesFree': '1%',
    },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    protectKernelDefaults: false,
  });
}
