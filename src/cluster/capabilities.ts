// The cluster's Capabilities as `helm upgrade` sees them: the API server's version and every
// group/version and group/version/Kind it serves (helm's GetVersionSet). A plain `helm template`
// uses helm's built-in defaults instead (helm 3.17: v1.32 and no kinds; helm 4.1: v1.35), so the
// install's own render (image plan, preflights) would differ from helm's install for a chart
// with a kubeVersion constraint, semverCompare on .Capabilities.KubeVersion, or a gate on
// .Capabilities.APIVersions.Has. Read with aggregated discovery: /version, /api and /apis, three
// requests at once (Kubernetes 1.27+; older servers answer /apis with the plain group list, and
// each group version is then read on its own).
import type { KubeConfig } from '@kubernetes/client-node';
import { capabilitiesArgs, type RenderCapabilities } from '../helm/helm-args.js';
import type { Logger } from '../logger.js';
import { kubeModule } from './kube-client.js';

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: { version: string; resources?: { responseKind?: { kind?: string }; subresources?: { responseKind?: { kind?: string } }[] }[] }[];
  }[];
  /** The legacy answers: /api's versions, /apis' groups. */
  versions?: string[];
  groups?: { versions?: { groupVersion: string }[] }[];
}

interface LegacyResourceList {
  resources?: { kind?: string }[];
}

/** The cluster's version and API list, read the way helm reads them for an upgrade. */
export async function clusterCapabilities(config: KubeConfig, o: { aggregated?: boolean } = {}): Promise<RenderCapabilities> {
  const get = await rawGetter(config);
  // `aggregated: false` reads the way a server without aggregated discovery answers (a test checks both agree).
  const accept = o.aggregated === false ? 'application/json' : AGGREGATED;
  const [version, core, groups] = await Promise.all([
    get('/version', 'application/json') as Promise<{ gitVersion?: string }>,
    get('/api', accept) as Promise<AggregatedList>,
    get('/apis', accept) as Promise<AggregatedList>,
  ]);
  if (!version.gitVersion) throw new Error('the API server did not report its version (/version has no gitVersion)');
  const apiVersions = new Set<string>();
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
            for (const kind of [r.responseKind?.kind, ...(r.subresources ?? []).map((s) => s.responseKind?.kind)]) if (kind) apiVersions.add(`${gv}/${kind}`);
          }
        }
      }
    } else {
      for (const gv of [...(list.versions ?? []), ...(list.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion))]) {
        apiVersions.add(gv);
        legacy.push(gv);
      }
    }
  }
  // A server without aggregated discovery: one read per group version, all at once.
  const lists = await Promise.all(legacy.map((gv) => get(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`, 'application/json') as Promise<LegacyResourceList>));
  lists.forEach((l, i) => l.resources?.forEach((r) => r.kind && apiVersions.add(`${legacy[i]}/${r.kind}`)));
  return { kubeVersion: version.gitVersion, apiVersions: [...apiVersions].sort() };
}

/** A GET with our own Accept header through the client's configured transport (auth, TLS, kept connections). */
async function rawGetter(config: KubeConfig): Promise<(path: string, accept: string) => Promise<unknown>> {
  const k8s = await kubeModule();
  class RawApi extends k8s.KubernetesObjectApi {
    async getJson(path: string, accept: string): Promise<unknown> {
      const context = this.configuration.baseServer.makeRequestContext(path, 'GET' as never);
      context.setHeaderParam('Accept', accept);
      for (const auth of [this.configuration.authMethods.BearerToken, this.configuration.authMethods.default]) await auth?.applySecurityAuthentication(context);
      const response = await this.configuration.httpApi.send(context).toPromise();
      const body = await response.body.text();
      if (response.httpStatusCode < 200 || response.httpStatusCode > 299) {
        throw new Error(`GET ${path}: HTTP ${response.httpStatusCode}: ${body.slice(0, 200)}`);
      }
      return JSON.parse(body) as unknown;
    }
  }
  const api = config.makeApiClient(RawApi);
  return (path, accept) => api.getJson(path, accept);
}

/**
 * The `helm template` flags that make the install's own renders (image plan, render check, RBAC
 * preflight) see the cluster helm upgrade will see. When the cluster cannot tell (not reachable
 * within the bound), helm's defaults are used, with a warning: helm upgrade itself then stops
 * on an unreachable cluster anyway.
 */
export async function clusterRenderFlags(config: KubeConfig | undefined, logger: Logger, boundMs = 15_000): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  try {
    if (!config) throw new Error('the cluster did not answer');
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${boundMs / 1000}s`)), boundMs);
    });
    const caps = await Promise.race([clusterCapabilities(config), bound]);
    logger.info({ kubeVersion: caps.kubeVersion, apiVersions: caps.apiVersions.length }, "rendering with the cluster's Kubernetes version and API list, as helm upgrade does");
    return capabilitiesArgs(caps);
  } catch (error) {
    const cause = error instanceof Error ? error.message.split('\n')[0] : String(error);
    logger.warn({ cause }, "cannot read the cluster's Kubernetes version and API list: the checks render with helm's defaults, which may differ from what helm installs for a chart that depends on them");
    return [];
  } finally {
    clearTimeout(timer);
  }
}
