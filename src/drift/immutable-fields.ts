// Fields the API server refuses to change, pure: the release's previous manifest against the new
// render, per kind, gives the objects whose upgrade would be refused (`field is immutable`,
// `updates to statefulset spec ... are forbidden`). Helm then fails, rolls back, and every later
// run fails the same way; the only way through is to delete the object and let helm create it
// again. Comparing the manifests as written costs no request, so an upgrade that changes none of
// these fields costs what it cost before; a candidate is confirmed by a dry run before anything
// is deleted (immutable-changes.ts), because a field written differently may still mean the same
// (a default spelled out).
import { sameJson } from './managed-fields.js';
import type { PlacedObject } from './manifest-objects.js';
import type { Obj } from '../cluster/object-client.js';

/**
 * `orphan`: delete the object alone, its pods (and a StatefulSet's PVCs) stay and the new object
 * adopts them. `delete`: delete it with what it owns; PVCs are never owned, so they stay too.
 */
export type RecreateHow = 'orphan' | 'delete';

export interface ImmutableCandidate {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** Its REST path. */
  path: string;
  /** The fields that differ and cannot change, dotted as the API server names them (`spec.serviceName`). */
  fields: string[];
  how: RecreateHow;
  /** The new object as helm will apply it (for the dry run). */
  body: Obj;
}

/** The StatefulSet spec fields an update may change (kubernetes pkg/apis/apps/validation, v1.34). */
const STATEFULSET_MUTABLE = new Set([
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
]);

/** The fixed immutable spec fields per `group/Kind` (a StatefulSet's are every field but the mutable ones). */
const IMMUTABLE_SPEC: Record<string, readonly string[]> = {
  'apps/Deployment': ['selector'],
  'apps/DaemonSet': ['selector'],
  'apps/ReplicaSet': ['selector'],
  'batch/Job': ['selector', 'template'],
  // A clusterIP is kept once set; some type changes need it set or cleared; the IP families and a
  // load balancer's class may not change either. The dry run tells which of these the server refuses.
  '/Service': ['clusterIP', 'clusterIPs', 'type', 'ipFamilies', 'loadBalancerClass'],
};

/** Pure: the objects of both manifests whose immutable fields differ, in the new manifest's order. */
export function immutableCandidates(
  previous: readonly PlacedObject[],
  next: readonly PlacedObject[],
): ImmutableCandidate[] {
  const before = new Map(previous.map((p) => [key(p), p]));
  const out: ImmutableCandidate[] = [];
  for (const p of next) {
    const old = before.get(key(p));
    if (!old || !p.path) continue;
    const fields = changedImmutableFields(groupKind(p), spec(old.body), spec(p.body));
    if (fields.length === 0) continue;
    out.push({
      apiVersion: p.apiVersion,
      kind: p.kind,
      name: p.name,
      ...(p.namespace ? { namespace: p.namespace } : {}),
      path: p.path,
      fields,
      how: recreateHow(p.kind, fields),
      body: p.body,
    });
  }
  return out;
}

/** Pure: the immutable spec fields that differ between two specs of a kind (`group/Kind`), sorted. */
export function changedImmutableFields(kind: string, before: Obj, after: Obj): string[] {
  const names =
    kind === 'apps/StatefulSet'
      ? [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !STATEFULSET_MUTABLE.has(k))
      : (IMMUTABLE_SPEC[kind] ?? []);
  return names
    .filter((k) => !sameJson(before[k], after[k]))
    .map((k) => `spec.${k}`)
    .sort();
}

/**
 * Pure. A StatefulSet whose selector stays is orphaned: its pods still match, the new one adopts
 * them (and their PVCs, by name). Any other object is deleted with what it owns: pods of an old
 * selector would never be adopted, and would hold the names the new pods need.
 */
export function recreateHow(kind: string, fields: readonly string[]): RecreateHow {
  return kind === 'StatefulSet' && !fields.includes('spec.selector') ? 'orphan' : 'delete';
}

/** Pure: whether the API server's refusal (refusal.ts' text) is one of an immutable field. */
export function isImmutableRefusal(reason: string): boolean {
  return /field is immutable|may not change once set|Forbidden: updates to \S+ spec/i.test(reason);
}

function groupKind(p: { apiVersion: string; kind: string }): string {
  const group = p.apiVersion.includes('/') ? p.apiVersion.slice(0, p.apiVersion.indexOf('/')) : '';
  return `${group}/${p.kind}`;
}

function key(p: PlacedObject): string {
  return `${groupKind(p)}/${p.namespace ?? ''}/${p.name}`;
}

function spec(o: Obj): Obj {
  const s = o.spec;
  return s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Obj) : {};
}
