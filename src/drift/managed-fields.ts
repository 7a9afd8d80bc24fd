// Who changed a drifted field: the live object's managedFields name, per field manager, the
// fields it owns (fieldsV1: `f:<field>` for map keys, `k:{...}` for list items by their keys,
// `v:<json>` for set items by value, `i:<n>` for items by index, `.` for the item itself). A
// `kubectl set image` leaves "kubectl-set" owning the container's image; the summary names it.
// Pure.

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  time?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

type FieldSet = Record<string, unknown>;

/**
 * The manager that owns the value at `segments` (a parsed JSON pointer into `live`); when several
 * share it, one that names the field itself before one that owns a whole map above it, then the
 * one that wrote last. Undefined when none does (a field removed from the object has no owner
 * left). An Update that takes a map's last key from a manager leaves it `f:data: {}`, which reads
 * as the whole map, and managedFields times are whole seconds: without the first rule, a
 * `kubectl patch` in the same second as helm's create was named as helm's.
 */
export function fieldManager(live: unknown, segments: readonly string[]): string | undefined {
  const entries = owningEntries(live, segments);
  const named = entries.filter((e) => isFieldSet(e.fieldsV1) && owns(e.fieldsV1, live, segments, true));
  let best: ManagedFieldsEntry | undefined;
  for (const entry of named.length > 0 ? named : entries)
    if (!best || (entry.time ?? '') > (best.time ?? '')) best = entry;
  return best?.manager;
}

/** Every manager that owns the value at `segments`. */
export function fieldManagers(live: unknown, segments: readonly string[]): string[] {
  return [...new Set(owningEntries(live, segments).map((e) => e.manager!))];
}

function owningEntries(live: unknown, segments: readonly string[]): ManagedFieldsEntry[] {
  const entries = (live as { metadata?: { managedFields?: unknown } } | undefined)?.metadata?.managedFields;
  if (!Array.isArray(entries)) return [];
  return (entries as ManagedFieldsEntry[]).filter(
    (e) => e.manager && isFieldSet(e.fieldsV1) && owns(e.fieldsV1, live, segments),
  );
}

/** `exact`: only by naming the field itself, not by owning a whole value above it. */
function owns(fields: FieldSet, node: unknown, segments: readonly string[], exact = false): boolean {
  // A field no longer in the object has no owner left.
  if (node === undefined) return false;
  if (segments.length === 0) return true;
  // A leaf set (`f:args: {}`) owns the whole value: an atomic list or map, or a scalar.
  if (Object.keys(fields).length === 0) return !exact;
  const [head, ...rest] = segments as [string, ...string[]];
  if (Array.isArray(node)) {
    const index = Number(head);
    const item = node[index];
    if (!Number.isInteger(index) || item === undefined) return false;
    for (const [key, sub] of Object.entries(fields)) {
      if (isFieldSet(sub) && itemMatches(key, item, index) && owns(sub, item, rest, exact)) return true;
    }
    return false;
  }
  const sub = fields[`f:${head}`];
  if (!isFieldSet(sub) || node === null || typeof node !== 'object') return false;
  return owns(sub, (node as Record<string, unknown>)[head], rest, exact);
}

/** Whether a list-item key of fieldsV1 (`k:`, `v:`, `i:`) names this item. */
export function itemMatches(key: string, item: unknown, index: number): boolean {
  if (key.startsWith('i:')) return Number(key.slice(2)) === index;
  const json = parseJson(key.slice(2));
  if (json === undefined) return false;
  if (key.startsWith('v:')) return sameJson(json, item);
  if (!key.startsWith('k:') || json === null || typeof json !== 'object' || item === null || typeof item !== 'object')
    return false;
  return Object.entries(json).every(([k, v]) => sameJson(v, (item as Record<string, unknown>)[k]));
}

function isFieldSet(v: unknown): v is FieldSet {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}
