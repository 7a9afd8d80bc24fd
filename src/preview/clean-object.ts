// What of an object a plan compares and shows. The API server writes bookkeeping into every
// object (resourceVersion, uid, managedFields, status, ...) that an install never sets: left in,
// every object would look changed and every diff would be mostly noise. Pure; inputs are never
// modified (the cluster side may still hold them).
import type { Obj } from './plan-types.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

// Written by the API server, never by a chart.
const SERVER_SET_METADATA = ['managedFields', 'resourceVersion', 'uid', 'creationTimestamp', 'generation', 'selfLink'];

export function isMap(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A map's own value at `key` (never one inherited: a key "__proto__" or "constructor" is data). */
export function own(o: unknown, key: string): unknown {
  return isMap(o) && Object.hasOwn(o, key) ? o[key] : undefined;
}

/**
 * A copy without status, the server-set metadata and kubectl's last-applied annotation (a copy of
 * a whole earlier object, Secrets included: noise at best, a leak at worst). Emptied label and
 * annotation maps are dropped, so `{}` and absent compare equal.
 */
export function cleanObject(o: Obj): Obj {
  const { status: _status, ...rest } = structuredClone(o);
  const metadata = rest.metadata;
  if (!isMap(metadata)) return rest;
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  if (isMap(metadata.annotations)) delete metadata.annotations[LAST_APPLIED];
  for (const key of ['labels', 'annotations']) {
    const map = metadata[key];
    if (isMap(map) && Object.keys(map).length === 0) delete metadata[key];
  }
  return rest;
}

/**
 * `live` (a cleaned copy, modified) without the labels and annotations `desired` does not have:
 * controllers and people add their own (deployment.kubernetes.io/revision, a team label), and
 * helm's apply leaves them alone, so they are not changes. (A dry-run result holds them anyway.)
 */
export function withoutOthersMetadata(live: Obj, desired: Obj): Obj {
  const metadata = live.metadata;
  if (!isMap(metadata)) return live;
  for (const key of ['labels', 'annotations']) {
    const mine = metadata[key];
    if (!isMap(mine)) continue;
    const theirs = own(desired.metadata, key);
    for (const k of Object.keys(mine)) if (!isMap(theirs) || !Object.hasOwn(theirs, k)) delete mine[k];
    if (Object.keys(mine).length === 0) delete metadata[key];
  }
  return live;
}

/**
 * `live` cut down to the fields `desired` sets (lists item by item; items past desired's end
 * kept). For a refused dry run, where `desired` is the manifest as written: without the API
 * server's defaults in it, every defaulted field would otherwise show as removed.
 */
export function projectOnto(live: unknown, desired: unknown): unknown {
  if (isMap(live) && isMap(desired)) {
    return Object.fromEntries(
      Object.keys(desired)
        .filter((k) => Object.hasOwn(live, k))
        .map((k) => [k, projectOnto(live[k], desired[k])]),
    );
  }
  if (Array.isArray(live) && Array.isArray(desired))
    return live.map((item, i) => (i < desired.length ? projectOnto(item, desired[i]) : item));
  return live;
}
