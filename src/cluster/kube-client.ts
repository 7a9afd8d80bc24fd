// The Kubernetes API for the calls helm does not make (the release Lease, release Secrets, the
// state of what helm waits for), through the official JavaScript client. It loads the same
// configuration helm does: KUBECONFIG (or ~/.kube/config), else the pod's service account, with
// HELM_KUBECONTEXT choosing the context. The client is imported lazily (commands without a
// cluster never pay for it), and from the one-file bundle `npm run build` makes of the parts we
// use (kubernetes-client-entry.ts says why).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from '../common/errors.js';
import { packageRoot } from '../common/package-root.js';
import type { AppsV1Api, BatchV1Api, CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';

type KubeModule = typeof import('./kubernetes-client-entry.js');

export interface KubeClients {
  config: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  batch: BatchV1Api;
  coordination: CoordinationV1Api;
  /** The API server address, for messages. */
  server: string;
}

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

let clientModule: Promise<KubeModule> | undefined;

/** The client's entry in the bundle `npm run build` writes (test/tools/bundle-cli.mjs): what the CLI loads. */
function kubeClientBundlePath(): string {
  return join(packageRoot(), 'dist', 'bundle', 'kubernetes-client.js');
}

/** Starts loading the client early (it overlaps with work done meanwhile). */
export function preloadKubeClient(): void {
  // The bundle itself: both are the same file. The TypeScript sources (tests) and tsc's output
  // (the bench's and cluster's scripts) load it too when it is built, else the same exports unbundled.
  const bundle = kubeClientBundlePath();
  if (clientModule) return;
  clientModule = existsSync(bundle)
    ? (import(pathToFileURL(bundle).href) as Promise<KubeModule>)
    : import('./kubernetes-client-entry.js');
  // A load started early and never awaited (the run ended first) is not an unhandled rejection;
  // whoever awaits it still gets the error.
  clientModule.catch(() => undefined);
}

export async function kubeModule(): Promise<KubeModule> {
  preloadKubeClient();
  return clientModule!;
}

export async function connectKube(env: NodeJS.ProcessEnv = process.env): Promise<KubeClients> {
  const k8s = await kubeModule();
  const config = new k8s.KubeConfig();
  // loadFromDefault: KUBECONFIG (a list of files), ~/.kube/config, then in-cluster: helm's order.
  try {
    config.loadFromDefault();
  } catch (err) {
    // A kubeconfig that cannot be read or parsed is a setting to fix, not a bug of ours.
    const cause = err instanceof Error ? err.message : String(err);
    throw new UsageError(
      `cannot load the cluster configuration${env.KUBECONFIG ? ` from KUBECONFIG=${env.KUBECONFIG}` : ''}: ${cause}`,
      {
        hint: 'Point KUBECONFIG at a readable kubeconfig file, or leave it unset in a pod so the service account is used.',
        cause: err,
      },
    );
  }
  // With no kubeconfig and no service account the client falls back to http://localhost:8080,
  // then fails with an obscure TLS complaint taken for an internal error: name what is missing.
  if (
    config.clusters.length === 1 &&
    config.clusters[0]!.server === 'http://localhost:8080' &&
    config.users[0]?.name === 'user'
  ) {
    throw new UsageError(
      'no cluster configuration: KUBECONFIG is unset, ~/.kube/config does not exist and this is not a pod with a service account',
      {
        hint: "Set KUBECONFIG to the kubeconfig of the target cluster (in a Job the pod's service account is used).",
      },
    );
  }
  if (env.HELM_KUBECONTEXT) config.setCurrentContext(env.HELM_KUBECONTEXT);
  keepConnectionsAlive(config);
  return {
    config,
    core: config.makeApiClient(k8s.CoreV1Api),
    apps: config.makeApiClient(k8s.AppsV1Api),
    batch: config.makeApiClient(k8s.BatchV1Api),
    coordination: config.makeApiClient(k8s.CoordinationV1Api),
    server: config.getCurrentCluster()?.server ?? '(no cluster in the kubeconfig)',
  };
}

/**
 * The namespace helm uses when --namespace is not given: HELM_NAMESPACE, the kubeconfig
 * context's namespace, in a pod its own namespace, else "default". The installer resolves it
 * once and passes it to helm too, so the Lease and the release always agree.
 */
export function helmDefaultNamespace(
  config: Pick<KubeConfig, 'getCurrentContext' | 'getContextObject'>,
  env: NodeJS.ProcessEnv = process.env,
  readServiceAccountNamespace: () => string | undefined = readPodNamespace,
): string {
  if (env.HELM_NAMESPACE) return env.HELM_NAMESPACE;
  const fromContext = config.getContextObject(config.getCurrentContext())?.namespace;
  if (fromContext) return fromContext;
  return env.POD_NAMESPACE || readServiceAccountNamespace() || 'default';
}

/** The pod's own namespace, from its service account's files (undefined outside a pod). */
export function readPodNamespace(): string | undefined {
  try {
    return readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The client (2.x, undici) makes a new connection pool for every request (createDispatcher), so
 * every API call opened its own TLS connection: a full handshake, client certificate included,
 * per call; 80 for an install of the bundled chart (70 of them the RBAC preflight), most of a
 * second of CPU on a loaded machine before helm could start. One pool per cluster and user is
 * kept instead, as its older https.Agent code did (agentCache). It reaches into the client's
 * private createDispatcher: if a release renames it, calls open connections as before.
 */
function keepConnectionsAlive(config: KubeConfig): void {
  const client = config as unknown as { createDispatcher?: (cluster: unknown, options: unknown) => unknown };
  const createDispatcher = client.createDispatcher;
  if (typeof createDispatcher !== 'function') return;
  const pools = new Map<string, unknown>();
  client.createDispatcher = (cluster, options) => {
    const key = JSON.stringify([config.getCurrentCluster()?.name ?? '', config.getCurrentUser()?.name ?? '']);
    if (!pools.has(key)) pools.set(key, createDispatcher.call(config, cluster, options));
    return pools.get(key);
  };
}
