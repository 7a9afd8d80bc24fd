// The objects of a release's manifest as helm applied them, pure: parsed from the stored YAML,
// `kind: List` flattened (helm's resource builder does), each given the namespace helm gave it
// (the release namespace for a namespaced kind written without one; none for a cluster-scoped
// kind) and the ownership metadata helm adds to every object it creates or upgrades, so that
// re-applying the object changes nothing the release itself set.
import type { ResourceIndex } from '../cluster/capabilities.js';
import { isCustomResourceDefinition, splitManifestStream } from '../rendered/manifest-stream.js';
import { documentValues } from '../rendered/document-values.js';
import { objectPath, type Obj } from '../cluster/object-client.js';

export interface PlacedObject {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** The object to apply: the manifest's, with helm's namespace and metadata. */
  body: Obj;
  /** Its REST path; undefined when the cluster does not serve the kind (so it cannot exist). */
  path?: string;
}

/**
/**
 * The object lists of the manifests read last, newest first: one run goes over the same two
 * manifests several times (the render: cluster fit, claims, fields that cannot change; the deployed
 * record: drift, claims). The values themselves come from the run's one cache of parsed documents
 * (rendered/document-values.ts), frozen, so a caller changing what another one reads fails loudly
 * (placeObjects works on copies); this only keeps which of them each manifest holds.
 */
const listed: { manifest: string; withoutCrds: boolean; objects: readonly Obj[] }[] = [];
const KEPT = 4;

/**
 * The manifest's objects, in order; documents without a kind (empty, comments only) skipped. Read-only.
 * `withoutCrds`: a document that is surely one CustomResourceDefinition (told from its head,
 * isCustomResourceDefinition) is left out unread, for the passes that judge nothing of a CRD (the
 * immutable fields, the pods' fit): CRDs are most of the bytes of an operator's chart, and reading
 * 10 CRDs of 2 MB took each pass about 0.5 s. Its YAML is still read whole before anything changes
 * (the RBAC preflight, the CRD step).
 */
export function manifestObjects(manifest: string, o: { withoutCrds?: boolean } = {}): readonly Obj[] {
  const withoutCrds = o.withoutCrds === true;
  const hit = listed.find((p) => p.manifest === manifest && p.withoutCrds === withoutCrds);
  if (hit) return hit.objects;
  const objects = Object.freeze(objectsOf(manifest, withoutCrds));
  listed.unshift({ manifest, withoutCrds, objects });
  listed.length = Math.min(listed.length, KEPT);
  return objects;
}

function objectsOf(manifest: string, withoutCrds: boolean): Obj[] {
  const out: Obj[] = [];
  // The installer's own reader of helm's YAML (a fast path for what helm emits, the library for
  // the rest): the library alone took 80-110 ms for the bundled chart's manifest in a cold run.
  for (const piece of splitManifestStream(manifest)) {
    if (withoutCrds && isCustomResourceDefinition(piece.text)) continue;
    for (const value of documentValues(piece)) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
      const o = value as Obj;
      if (typeof o.kind !== 'string' || typeof o.apiVersion !== 'string') continue;
      // `kind: List` (or a typed `*List` with items) is its items, as helm applies it.
      if (o.kind.endsWith('List') && Array.isArray(o.items))
        out.push(...(o.items as Obj[]).filter((x) => x && typeof x === 'object'));
      else out.push(o);
    }
  }
  return out;
}

/** Each object with its namespace, helm's metadata and its REST path. */
export function placeObjects(
  objects: readonly Obj[],
  resources: ResourceIndex,
  o: { releaseNamespace: string; release: string },
): PlacedObject[] {
  return objects.map((object) => {
    const body = structuredClone(object);
    const apiVersion = String(body.apiVersion);
    const kind = String(body.kind);
    const metadata = (body.metadata ??= {}) as Obj & { name?: unknown; namespace?: unknown };
    const name = String(metadata.name ?? '');
    const info = resources.get(`${apiVersion}:${kind}`);
    // A kind the cluster does not serve: keep what the manifest says, the object cannot exist.
    const namespaced = info ? info.namespaced : true;
    const namespace = namespaced
      ? (typeof metadata.namespace === 'string' && metadata.namespace) || o.releaseNamespace
      : undefined;
    if (namespace) metadata.namespace = namespace;
    else delete metadata.namespace;
    // helm sets these on every object it installs or upgrades (and applies them with the rest).
    metadata.labels = { ...(metadata.labels as Obj | undefined), 'app.kubernetes.io/managed-by': 'Helm' };
    metadata.annotations = {
      ...(metadata.annotations as Obj | undefined),
      'meta.helm.sh/release-name': o.release,
      'meta.helm.sh/release-namespace': o.releaseNamespace,
    };
    return {
      apiVersion,
      kind,
      name,
      ...(namespace ? { namespace } : {}),
      body,
      ...(info ? { path: objectPath(apiVersion, info, name, namespace) } : {}),
    };
  });
}

/** `Deployment web in namespace shop`, for messages. */
export function describeObject(o: { kind: string; name: string; namespace?: string }): string {
  return `${o.kind} ${o.name}${o.namespace ? ` in namespace ${o.namespace}` : ''}`;
}
