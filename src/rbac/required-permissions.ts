// What `helm upgrade --install --wait --rollback-on-failure` needs to be allowed to do for a
// rendered chart, as RBAC (group, resource, namespace, verb). Pure: the caller resolves each
// kind to its resource (discovery, or a CRD the chart itself installs).
//
// Per rendered object helm reads it (get), creates it, changes it on upgrade (patch: server-side
// apply in helm 4, a merge patch in helm 3), deletes it when a new version drops it or a rollback
// undoes it, and watches it while it waits (list, watch). The installer's own recreate of an
// object whose field cannot change (reconcile/actions/recreate-immutable.ts) is a get, a patch dry
// run and a delete of a rendered object: covered by the same verbs, so nothing is added for it. Its own release records are Secrets in
// the release namespace (get, list, create, update, delete). CRDs from crds/ are never deleted
// or upgraded by helm, but helm 4 installs them by server-side apply (patch), helm 3 by create.
// The installer passes --create-namespace, so the release namespace itself is read and applied.
// The installer's own Lease and health reads come on top, whatever the chart.
import { documentValues } from '../rendered/document-values.js';
import { isCustomResourceDefinition, parsePiece, splitManifestStream } from '../rendered/manifest-stream.js';

const OBJECT_VERBS = ['get', 'list', 'watch', 'create', 'patch', 'delete'] as const;
const RELEASE_STORAGE_VERBS = ['get', 'list', 'create', 'update', 'delete'] as const;
/** One installer at a time: a Lease per release in its namespace. */
const LEASE_VERBS = ['get', 'create', 'update', 'delete'] as const;
const NAMESPACE_VERBS = ['get', 'patch'] as const;
export const CRD_VERBS = ['get', 'list', 'watch', 'create', 'patch'] as const;
/**
 * What the installer itself reads in the release namespace, whatever the chart: the workloads
 * (is an unchanged release healthy? what is helm waiting for?), hook Jobs, pods, their events and
 * a crashing container's log tail (src/cluster/workload-health.ts, read-problems.ts).
 */
const INSTALLER_READS: readonly { group: string; resource: string; verb: string }[] = [
  ...['deployments', 'statefulsets', 'daemonsets'].map((resource) => ({ group: 'apps', resource, verb: 'list' })),
  { group: 'batch', resource: 'jobs', verb: 'list' },
  { group: '', resource: 'pods', verb: 'list' },
  { group: '', resource: 'events', verb: 'list' },
  { group: '', resource: 'pods/log', verb: 'get' },
];

/**
 * The installer's own Events (src/tell/events.ts), in the namespace they go to: the run can do
 * without them, so the preflight names a denial as a warning, never as a failure.
 */
export function eventPermission(namespace: string): Permission {
  return { group: 'events.k8s.io', resource: 'events', namespace, verb: 'create', for: ["the installer's Events"] };
}

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** A CustomResourceDefinition's resources, per served version (`<group>/<version>:<Kind>`). */
  defines?: Map<string, ResourceInfo>;
}

import type { ResourceInfo } from '../cluster/capabilities.js';

export interface Permission {
  group: string;
  resource: string;
  /** Undefined for cluster-scoped resources. */
  namespace?: string;
  verb: string;
  /** The objects that need it (for the error message), e.g. `Deployment/storefront-web`. */
  for: string[];
}

/** Every object in a multi-document manifest stream (empty documents and Lists' items handled), parsed once. */
export function renderedObjects(manifests: string): RenderedObject[] {
  const out: RenderedObject[] = [];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML, each field checked before use
  const add = (o: any) => {
    if (!o || typeof o !== 'object' || typeof o.kind !== 'string' || typeof o.apiVersion !== 'string') return;
    if (o.kind.endsWith('List') && Array.isArray(o.items)) return o.items.forEach(add);
    const defines = o.kind === 'CustomResourceDefinition' ? definedResources(o) : undefined;
    out.push({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: String(o.metadata?.name ?? ''),
      namespace: o.metadata?.namespace ?? undefined,
      ...(defines ? { defines } : {}),
    });
  };
  // Only the head of each object is read (a List's items and a CRD whole): the whole tree of
  // every document (toJS, and the library's parser where the post-render's fast reader suffices)
  // took 0.7-2 s for a chart of 1000 Deployments, before helm could start; this takes about 0.1 s.
  for (const piece of splitManifestStream(manifests)) {
    // A CRD is read whole once a run, the CRD step reading the same values (document-values.ts).
    if (isCustomResourceDefinition(piece.text)) {
      documentValues(piece).forEach(add);
      continue;
    }
    // The stream's documents, read as the post-renderer reads them (helm's YAML, go-yaml's rules).
    for (const doc of parsePiece(piece).docs) {
      const kind = doc.get('kind');
      if (typeof kind === 'string' && (kind.endsWith('List') || kind === 'CustomResourceDefinition')) add(doc.toJS());
      else
        add({
          apiVersion: doc.get('apiVersion'),
          kind,
          metadata: { name: doc.getIn(['metadata', 'name']), namespace: doc.getIn(['metadata', 'namespace']) },
        });
    }
  }
  return out;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a parsed CRD, its fields read optionally
function definedResources(o: any): Map<string, ResourceInfo> | undefined {
  if (!o.spec?.names?.kind) return undefined;
  const map = new Map<string, ResourceInfo>();
  for (const v of o.spec.versions ?? [{ name: o.spec.version }]) {
    map.set(`${o.spec.group}/${v.name}:${o.spec.names.kind}`, {
      group: o.spec.group,
      resource: o.spec.names.plural,
      namespaced: o.spec.scope !== 'Cluster',
    });
  }
  return map;
}

/** Resource info for the CRDs among the objects: their custom resources may not be served yet. */
export function crdResources(objects: RenderedObject[]): Map<string, ResourceInfo> {
  return new Map(objects.flatMap((o) => [...(o.defines ?? [])]));
}

/**
 * The permissions the install needs. `resolve` maps an object to its resource (undefined: the
 * server does not know the kind; helm will say so itself, so it is left out here).
 */
export function requiredPermissions(
  objects: RenderedObject[],
  releaseNamespace: string,
  resolve: (o: RenderedObject) => ResourceInfo | undefined,
): Permission[] {
  const byKey = new Map<string, Permission>();
  const need = (
    group: string,
    resource: string,
    namespace: string | undefined,
    verbs: readonly string[],
    what: string,
  ) => {
    for (const verb of verbs) {
      const key = `${group}|${resource}|${namespace ?? ''}|${verb}`;
      const p = byKey.get(key) ?? { group, resource, ...(namespace ? { namespace } : {}), verb, for: [] };
      if (!p.for.includes(what)) p.for.push(what);
      byKey.set(key, p);
    }
  };
  need('', 'secrets', releaseNamespace, RELEASE_STORAGE_VERBS, 'the release records');
  // --create-namespace: helm 4 applies the release namespace (patch), helm 3 reads it first.
  need('', 'namespaces', releaseNamespace, NAMESPACE_VERBS, 'the release namespace');
  need('coordination.k8s.io', 'leases', releaseNamespace, LEASE_VERBS, 'the installer Lease');
  for (const o of objects) {
    const info = resolve(o);
    if (!info) continue;
    const what = `${o.kind}/${o.name}`;
    const verbs = o.kind === 'CustomResourceDefinition' ? CRD_VERBS : OBJECT_VERBS;
    need(info.group, info.resource, info.namespaced ? (o.namespace ?? releaseNamespace) : undefined, verbs, what);
  }
  for (const r of INSTALLER_READS)
    need(r.group, r.resource, releaseNamespace, [r.verb], "the installer's health checks");
  return [...byKey.values()];
}

/** `create deployments.apps in namespace shop` */
export function describePermission(p: Pick<Permission, 'group' | 'resource' | 'namespace' | 'verb'>): string {
  const resource = p.group ? `${p.resource}.${p.group}` : p.resource;
  return `${p.verb} ${resource} ${p.namespace ? `in namespace ${p.namespace}` : '(cluster-wide)'}`;
}
