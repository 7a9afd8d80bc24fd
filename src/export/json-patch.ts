// The customer's change to one object as RFC 6902 operations, pure: what turns the vendor's object
// (base) into the customer's (the full render). Maps are compared key by key, so a patch touches
// only the fields the customer's values changed; a list that differs is replaced whole, because
// an index-based `add`/`remove` would silently hit the wrong item once a new vendor version
// inserts one into that list (a whole-list replace fails loudly instead: the path is explicit).
export type JsonPatchOperation =
  { op: 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/** JSON pointer escaping (RFC 6901): `~` and `/` inside a key, as in `helm.sh/hook`. */
export function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function diffObjects(base: unknown, full: unknown, path = ''): JsonPatchOperation[] {
  if (isMap(base) && isMap(full)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(base)) {
      const at = `${path}/${pointerSegment(key)}`;
      if (!(key in full)) ops.push({ op: 'remove', path: at });
      else ops.push(...diffObjects(base[key], full[key], at));
    }
    for (const key of Object.keys(full)) {
      if (!(key in base)) ops.push({ op: 'add', path: `${path}/${pointerSegment(key)}`, value: full[key] });
    }
    return ops;
  }
  if (sameValue(base, full)) return [];
  return [{ op: 'replace', path, value: full }];
}

/** Deep equality of two parsed YAML values (maps compared by key, not by order). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameValue(a[k], b[k]));
  }
  return false;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
