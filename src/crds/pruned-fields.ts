// Which fields of a custom resource the API server would drop when it is written in another
// version, pure: a CRD's structural schema prunes every field it does not declare (unless a node
// says x-kubernetes-preserve-unknown-fields), so an object stored in a version whose schema had
// a field the new storage version lacks loses it on its rewrite. Checked for every object before
// any change, so a migration that would lose data is refused; the server's own dry run of each
// write (migrate-storage.ts) is the final word once the intermediate CRD serves the new version.
import type { Obj } from './chart-crds.js';

/** The openAPIV3Schema of `version` in a CRD, or undefined (no schema: nothing to check). */
export function versionSchema(crd: Obj, version: string): Obj | undefined {
  const versions =
    ((crd.spec ?? {}) as { versions?: { name?: unknown; schema?: { openAPIV3Schema?: Obj } }[] }).versions ?? [];
  return versions.find((v) => v.name === version)?.schema?.openAPIV3Schema;
}

/** Paths (`spec.old`, `spec.ports[0].legacy`) of `object` that `schema` would prune; apiVersion, kind and metadata are never pruned at the root. */
export function prunedFields(object: Obj, schema: Obj | undefined): string[] {
  if (!schema) return [];
  const out: string[] = [];
  const root: Obj = { ...object };
  for (const k of ['apiVersion', 'kind', 'metadata']) delete root[k];
  walk(root, schema, '', out);
  return out;
}

function walk(value: unknown, schema: Obj, path: string, out: string[]): void {
  if (Array.isArray(value)) {
    const items = schema.items as Obj | undefined;
    if (items && typeof items === 'object' && !Array.isArray(items))
      value.forEach((v, i) => walk(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!value || typeof value !== 'object') return;
  const properties = (schema.properties ?? {}) as Record<string, Obj>;
  const additional = schema.additionalProperties;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  for (const [key, sub] of Object.entries(value as Obj)) {
    const at = path ? `${path}.${key}` : key;
    if (Object.hasOwn(properties, key)) walk(sub, properties[key]!, at, out);
    else if (additional && typeof additional === 'object') walk(sub, additional as Obj, at, out);
    else if (embedded && ['apiVersion', 'kind', 'metadata'].includes(key)) continue;
    else if (!preserve && additional !== true) out.push(at);
  }
}

/** Paths present in `before` and absent in `after` (the server's dry run of a write): what it pruned. */
export function removedPaths(before: unknown, after: unknown, path = ''): string[] {
  if (Array.isArray(before)) {
    if (!Array.isArray(after)) return after === undefined ? [path] : [];
    return before.flatMap((v, i) => removedPaths(v, after[i], `${path}[${i}]`));
  }
  if (!before || typeof before !== 'object') return after === undefined ? [path] : [];
  if (!after || typeof after !== 'object' || Array.isArray(after)) return after === undefined ? [path] : [];
  return Object.entries(before as Obj).flatMap(([k, v]) =>
    removedPaths(v, (after as Obj)[k], path ? `${path}.${k}` : k),
  );
}
