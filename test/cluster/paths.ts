// Where the local control plane keeps its binaries and its state. One cache root
// (~/.cache/helm-installer, or $HELM_INSTALLER_CACHE) is shared with build-binaries.sh, whose
// version defaults are the single source of truth for which binaries we run.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Versions {
  kubernetes: string;
  etcd: string;
  kwok: string;
}

export interface BinaryPaths {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  /** The real node's kubelet (built with cgo). */
  kubelet: string;
  kwok: string;
  /** kwok's stage files, copied from its module source by build-binaries.sh */
  kwokStages: string;
}

/** The repository root, found from this file whether it runs as test/cluster/*.ts or dist/test/cluster/*.js. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && /"name":\s*"helm-installer"/.test(readFileSync(manifest, 'utf8'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no helm-installer package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}

export function cacheRoot(): string {
  return process.env.HELM_INSTALLER_CACHE || join(homedir(), '.cache', 'helm-installer');
}

function clusterStateDir(): string {
  return join(cacheRoot(), 'cluster');
}

export function buildScriptPath(): string {
  return join(repoRoot(), 'test', 'cluster', 'build-binaries.sh');
}

export function kubectlPath(): string {
  return join(repoRoot(), 'node_modules', '.helm-installer', 'kubectl');
}

/** Reads a `NAME="${NAME:-vX.Y.Z}"` default from build-binaries.sh (an env override wins, as in the script). */
function scriptDefault(name: string): string {
  const fromEnv = process.env[name];
  if (fromEnv) return fromEnv;
  const script = readFileSync(buildScriptPath(), 'utf8');
  const match = new RegExp(`^${name}="\\$\\{${name}:-([^}]+)\\}"`, 'm').exec(script);
  if (!match?.[1]) throw new Error(`build-binaries.sh has no default for ${name}`);
  return match[1];
}

export function pinnedVersions(): Versions {
  return {
    kubernetes: scriptDefault('K8S_VERSION'),
    etcd: scriptDefault('ETCD_VERSION'),
    kwok: scriptDefault('KWOK_VERSION'),
  };
}

/** Flux's controllers and the helm-controller API module the HelmRelease CRD is generated from. */
export interface FluxVersions {
  sourceController: string;
  kustomizeController: string;
  helmControllerApi: string;
}

export function pinnedFluxVersions(): FluxVersions {
  return {
    sourceController: scriptDefault('FLUX_SOURCE_VERSION'),
    kustomizeController: scriptDefault('FLUX_KUSTOMIZE_VERSION'),
    helmControllerApi: scriptDefault('FLUX_HELM_API_VERSION'),
  };
}

/** Troubleshoot's version build-binaries.sh pins (TROUBLESHOOT_VERSION), for `troubleshoot-specs`' proof. */
export function pinnedTroubleshootVersion(): string {
  return scriptDefault('TROUBLESHOOT_VERSION');
}

export function binaryPaths(versions: Versions = pinnedVersions()): BinaryPaths {
  const bin = join(cacheRoot(), 'bin');
  return {
    etcd: join(bin, `etcd-${versions.etcd}`),
    kubeApiserver: join(bin, `kube-apiserver-${versions.kubernetes}`),
    kubeControllerManager: join(bin, `kube-controller-manager-${versions.kubernetes}`),
    kubeScheduler: join(bin, `kube-scheduler-${versions.kubernetes}`),
    kubelet: join(bin, `kubelet-${versions.kubernetes}`),
    kwok: join(bin, `kwok-${versions.kwok}`),
    kwokStages: join(cacheRoot(), `kwok-stages-${versions.kwok}`),
  };
}

/** Layout of the state directory of one running cluster. */
export function statePaths(stateDir: string = clusterStateDir()) {
  const pki = join(stateDir, 'pki');
  return {
    stateDir,
    pki,
    caCert: join(pki, 'ca.crt'),
    caKey: join(pki, 'ca.key'),
    apiserverCert: join(pki, 'apiserver.crt'),
    apiserverKey: join(pki, 'apiserver.key'),
    adminCert: join(pki, 'admin.crt'),
    adminKey: join(pki, 'admin.key'),
    serviceAccountKey: join(pki, 'sa.key'),
    serviceAccountPub: join(pki, 'sa.pub'),
    etcdData: join(stateDir, 'etcd'),
    logs: join(stateDir, 'logs'),
    kubeconfig: join(stateDir, 'kubeconfig'),
    kwokConfig: join(stateDir, 'kwok.yaml'),
    pids: join(stateDir, 'pids.json'),
    node: realNodePaths(join(stateDir, 'node')),
  };
}

export type StatePaths = ReturnType<typeof statePaths>;

/** The real node's state: registry storage, containerd's root and state, the kubelet's root dir. */
function realNodePaths(nodeDir: string) {
  const containerd = join(nodeDir, 'containerd');
  const kubelet = join(nodeDir, 'kubelet');
  return {
    nodeDir,
    registryConfig: join(nodeDir, 'registry', 'config.yml'),
    registryData: join(nodeDir, 'registry', 'data'),
    containerdConfig: join(containerd, 'config.toml'),
    containerdRoot: join(containerd, 'root'),
    containerdState: join(containerd, 'state'),
    containerdSocket: join(containerd, 'containerd.sock'),
    /** containerd's CRI registry config_path: one hosts.toml per registry host. */
    registryHosts: join(containerd, 'certs.d'),
    cniConfDir: join(containerd, 'cni'),
    runcRoot: join(containerd, 'runc'),
    kubeletConfig: join(kubelet, 'config.yaml'),
    kubeletRoot: join(kubelet, 'root'),
    podLogs: join(kubelet, 'pod-logs'),
    volumePlugins: join(kubelet, 'volume-plugins'),
  };
}

export type RealNodePaths = ReturnType<typeof realNodePaths>;
