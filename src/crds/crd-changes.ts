// What an update of a CRD changes, pure, in the words a vendor uses: versions added and removed,
// the storage version, and the fields of each version's schema added and removed (by path, as
// `spec.replicas`). For the plan's CRD section and the log; a field's type or its validation
// rules are not listed.
import { crdVersions, type Obj } from './chart-crds.js';

export interface CrdChanges {
  versionsAdded: string[];
  versionsRemoved: string[];
  /** `v1alpha1 -> v1` when the storage version moves. */
  storage?: { from: string; to: string };
  /** `v1: spec.replicas`, for versions in both. */
  fieldsAdded: string[];
  fieldsRemoved: string[];
}

const MAX_FIELDS = 50;

export function crdChanges(live: Obj, desired: Obj): CrdChanges {
  const before = crdVersions(live);
  const after = crdVersions(desired);
  const names = (vs: { name: string }[]) => new Set(vs.map((v) => v.name));
  const had = names(before);
  const has = names(after);
  const from = before.find((v) => v.storage)?.name;
  const to = after.find((v) => v.storage)?.name;
  const fieldsAdded: string[] = [];
  const fieldsRemoved: string[] = [];
  for (const version of after.map((v) => v.name).filter((v) => had.has(v))) {
    const old = new Set(schemaFields(versionSchema(live, version)));
    const now = new Set(schemaFields(versionSchema(desired, version)));
    for (const f of now) if (!old.has(f)) fieldsAdded.push(`${version}: ${f}`);
    for (const f of old) if (!now.has(f)) fieldsRemoved.push(`${version}: ${f}`);
  }
  return {
    versionsAdded: [...has].filter((v) => !had.has(v)),
    versionsRemoved: [...had].filter((v) => !has.has(v)),
    ...(from && to && from !== to ? { storage: { from, to } } : {}),
    fieldsAdded: fieldsAdded.slice(0, MAX_FIELDS),
    fieldsRemoved: fieldsRemoved.slice(0, MAX_FIELDS),
  };
}

export function hasChanges(c: CrdChanges): boolean {
  return (
    c.versionsAdded.length + c.versionsRemoved.length + c.fieldsAdded.length + c.fieldsRemoved.length > 0 ||
    c.storage !== undefined
  );
}

/** `versions +v2 -v1alpha1; storage v1 -> v2; fields +v1: spec.size -v1: spec.old` */
export function describeCrdChanges(c: CrdChanges): string {
  const parts: string[] = [];
  const signed = (xs: string[], sign: string) => xs.map((x) => `${sign}${x}`);
  if (c.versionsAdded.length + c.versionsRemoved.length > 0)
    parts.push(`versions ${[...signed(c.versionsAdded, '+'), ...signed(c.versionsRemoved, '-')].join(' ')}`);
  if (c.storage) parts.push(`storage ${c.storage.from} -> ${c.storage.to}`);
  if (c.fieldsAdded.length + c.fieldsRemoved.length > 0)
    parts.push(`fields ${[...signed(c.fieldsAdded, '+'), ...signed(c.fieldsRemoved, '-')].join(', ')}`);
  return parts.length > 0 ? parts.join('; ') : 'no version or field changes';
}

function versionSchema(crd: Obj, version: string): Obj | undefined {
  const versions =
    ((crd.spec ?? {}) as { versions?: { name?: unknown; schema?: { openAPIV3Schema?: Obj } }[] }).versions ?? [];
  return versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
}

/** Every property path of an OpenAPI schema: `spec`, `spec.replicas`, `spec.ports[].name`. */
export function schemaFields(schema: Obj | undefined, prefix = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const out: string[] = [];
  const properties = schema.properties as Record<string, Obj> | undefined;
  for (const [name, sub] of Object.entries(properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push(path, ...schemaFields(sub, path));
  }
  const items = schema.items as Obj | undefined;
  if (items && typeof items === 'object' && !Array.isArray(items)) out.push(...schemaFields(items, `${prefix}[]`));
  return out;
}
