// What the cluster serves, read once per run from discovery, for two users:
// - the Capabilities as `helm upgrade` sees them: the API server's version and every
//   group/version and group/version/Kind it serves (helm's GetVersionSet). A plain `helm template`
//   uses helm's built-in defaults instead (helm 3.17: v1.32 and no kinds; helm 4.1: v1.35), so the
//   install's own render (image catalog, preflights) would differ from helm's install for a chart
//   with a kubeVersion constraint, semverCompare on .Capabilities.KubeVersion, or a gate on
//   .Capabilities.APIVersions.Has;
// - each kind's resource (plural) and scope, which the RBAC preflight needs to name what it asks
//   for. The same discovery answer carries both, so the preflight reads nothing again for a kind
//   the server already served when the run started.
// Read with aggregated discovery: /version, /api and /apis, three requests at once (Kubernetes
// 1.27+; older servers answer /apis with the plain group list, and each group version is then
// read on its own).
import type { KubeConfig } from '@kubernetes/client-node';
import { capabilitiesArgs, type RenderCapabilities } from '../helm/helm-args.js';
import type { Logger } from 'pino';
import { kubeModule } from './kube-client.js';

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

interface AggregatedResource {
  resource?: string;
  scope?: string;
  responseKind?: { kind?: string };
  subresources?: { responseKind?: { kind?: string } }[];
}

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: { version: string; resources?: AggregatedResource[] }[];
  }[];
  /** The legacy answers: /api's versions, /apis' groups. */
  versions?: string[];
  groups?: { versions?: { groupVersion: string }[] }[];
}

interface LegacyResourceList {
  resources?: { name?: string; kind?: string; namespaced?: boolean }[];
}

/** `apiVersion:kind` (e.g. `apps/v1:Deployment`) to its resource, for every top-level resource served. */
/** A kind's resource as the API serves it (and RBAC rules name it). */
export interface ResourceInfo {
  group: string;
  /** Plural resource name, as RBAC rules name it. */
  resource: string;
  namespaced: boolean;
}

export type ResourceIndex = Map<string, ResourceInfo>;

export interface ClusterDiscovery {
  capabilities: RenderCapabilities;
  resources: ResourceIndex;
}

/** The cluster's version and API list, read the way helm reads them for an upgrade. */
export async function clusterCapabilities(
  config: KubeConfig,
  o: { aggregated?: boolean } = {},
): Promise<RenderCapabilities> {
  return (await clusterDiscovery(config, o)).capabilities;
}

/** The Capabilities and the resource index from one discovery read. */
export async function clusterDiscovery(
  config: KubeConfig,
  o: { aggregated?: boolean } = {},
): Promise<ClusterDiscovery> {
  return (await startDiscovery(config, o)).read();
}

/**
 * Sends the discovery requests now and returns what parses their answers, once, when asked: a run
 * can overlap the round trips with its own first reads and still spend no parsing on a run that
 * turns out not to need them (the no-op redeploy).
 */
async function startDiscovery(
  config: KubeConfig,
  o: { aggregated?: boolean; signal?: AbortSignal } = {},
): Promise<{ read: () => Promise<ClusterDiscovery> }> {
  const get = await rawGetter(config, o.signal);
  // `aggregated: false` reads the way a server without aggregated discovery answers (a test checks both agree).
  const accept = o.aggregated === false ? 'application/json' : AGGREGATED;
  const answers = Promise.all([get('/version', 'application/json'), get('/api', accept), get('/apis', accept)]);
  answers.catch(() => undefined);
  let parsed: Promise<ClusterDiscovery> | undefined;
  return {
    read: () =>
      (parsed ??= answers.then(([version, core, groups]) =>
        parseDiscovery(get, JSON.parse(version), JSON.parse(core), JSON.parse(groups)),
      )),
  };
}

async function parseDiscovery(
  get: RawGet,
  version: { gitVersion?: string },
  core: AggregatedList,
  groups: AggregatedList,
): Promise<ClusterDiscovery> {
  if (!version.gitVersion) throw new Error('the API server did not report its version (/version has no gitVersion)');
  const apiVersions = new Set<string>();
  const resources: ResourceIndex = new Map();
  const index = (gv: string, kind: string | undefined, resource: string | undefined, namespaced: boolean) => {
    // The first resource of a kind wins, as in the client's own lookup (KubernetesObjectApi).
    const key = `${gv}:${kind}`;
    if (kind && resource && !resources.has(key))
      resources.set(key, { group: gv.includes('/') ? gv.slice(0, gv.indexOf('/')) : '', resource, namespaced });
  };
  const legacy: string[] = [];
  for (const [list, group] of [
    [core, ''],
    [groups, undefined],
  ] as const) {
    if (list.kind === 'APIGroupDiscoveryList') {
      for (const item of list.items ?? []) {
        const name = group ?? item.metadata?.name ?? '';
        for (const v of item.versions ?? []) {
          const gv = name ? `${name}/${v.version}` : v.version;
          apiVersions.add(gv);
          for (const r of v.resources ?? []) {
            // Subresources too: helm lists each entry of the (legacy) resource list, `deployments/scale` included.
            for (const kind of [r.responseKind?.kind, ...(r.subresources ?? []).map((s) => s.responseKind?.kind)])
              if (kind) apiVersions.add(`${gv}/${kind}`);
            index(gv, r.responseKind?.kind, r.resource, r.scope !== 'Cluster');
          }
        }
      }
    } else {
      for (const gv of [
        ...(list.versions ?? []),
        ...(list.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion)),
      ]) {
        apiVersions.add(gv);
        legacy.push(gv);
      }
    }
  }
  // A server without aggregated discovery: one read per group version, all at once.
  const lists = await Promise.all(
    legacy.map(
      async (gv) =>
        JSON.parse(
          await get(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`, 'application/json'),
        ) as LegacyResourceList,
    ),
  );
  lists.forEach((l, i) =>
    l.resources?.forEach((r) => {
      if (r.kind) apiVersions.add(`${legacy[i]}/${r.kind}`);
      // `deployments/scale` is a subresource: not what RBAC names for a Scale object.
      if (r.name && !r.name.includes('/')) index(legacy[i]!, r.kind, r.name, r.namespaced === true);
    }),
  );
  return { capabilities: { kubeVersion: version.gitVersion, apiVersions: [...apiVersions].sort() }, resources };
}

type RawGet = (path: string, accept: string) => Promise<string>;

/** A GET with our own Accept header through the client's configured transport (auth, TLS, kept connections). */
async function rawGetter(config: KubeConfig, signal?: AbortSignal): Promise<RawGet> {
  const k8s = await kubeModule();
  class RawApi extends k8s.KubernetesObjectApi {
    async getText(path: string, accept: string): Promise<string> {
      const context = this.configuration.baseServer.makeRequestContext(path, 'GET' as never);
      context.setHeaderParam('Accept', accept);
      if (signal) context.setSignal(signal);
      for (const auth of [this.configuration.authMethods.BearerToken, this.configuration.authMethods.default])
        await auth?.applySecurityAuthentication(context);
      const response = await this.configuration.httpApi.send(context).toPromise();
      const body = await response.body.text();
      if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
        throw new Error(`GET ${path}: HTTP ${response.httpStatusCode}: ${body.slice(0, 200)}`);
      }
      return body;
    }
  }
  const api = config.makeApiClient(RawApi);
  return (path, accept) => api.getText(path, accept);
}

/**
 * Discovery for an install, started now: the requests go out at once, so their round trips
 * overlap whatever the run does meanwhile; the answers are parsed only when `read` is called.
 * `read` rejects when the cluster does not answer within the bound (counted from now); the
 * requests are then given up, as they are on `stop` (a run that needs no answers, such as an
 * unchanged redeploy, ends without waiting for a slow server's).
 */
export function readClusterDiscovery(
  config: KubeConfig,
  boundMs = 15_000,
): { read: () => Promise<ClusterDiscovery>; stop: () => void } {
  const stopped = new AbortController();
  const started = startDiscovery(config, { signal: stopped.signal });
  started.catch(() => undefined);
  const deadline = Date.now() + boundMs;
  let result: Promise<ClusterDiscovery> | undefined;
  return {
    read: () =>
      (result ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => {
              reject(new Error(`no answer within ${boundMs / 1000}s`));
              stopped.abort();
            },
            Math.max(0, deadline - Date.now()),
          );
        });
        try {
          return await Promise.race([started.then((s) => s.read()), bound]);
        } finally {
          clearTimeout(timer);
        }
      })()),
    stop: () => stopped.abort(),
  };
}

/**
 * The `helm template` flags that make the install's own renders (image catalog, render check, RBAC
 * preflight) see the cluster helm upgrade will see. When the cluster cannot tell (not reachable
 * within the bound), helm's defaults are used, with a warning: helm upgrade itself then stops
 * on an unreachable cluster anyway.
 */
export async function clusterRenderFlags(
  discovery: Promise<ClusterDiscovery> | undefined,
  logger: Logger,
): Promise<string[]> {
  try {
    if (!discovery) throw new Error('the cluster did not answer');
    const { capabilities: caps } = await discovery;
    logger.info(
      { kubeVersion: caps.kubeVersion, apiVersions: caps.apiVersions.length },
      "rendering with the cluster's Kubernetes version and API list, as helm upgrade does",
    );
    return capabilitiesArgs(caps);
  } catch (error) {
    const cause = error instanceof Error ? error.message.split('\n')[0] : String(error);
    logger.warn(
      { cause },
      "cannot read the cluster's Kubernetes version and API list: the checks render with helm's defaults, which may differ from what helm installs for a chart that depends on them",
    );
    return [];
  }
}
