// The values of a render's documents, read once per run: the one cache of parsed YAML. A
// document's values are what several steps read: the RBAC preflight and the CRD step (an
// operator's chart renders megabytes of CRDs, 10 of 2 MB in the bench, each read took about 0.5 s
// of an upgrade), and every pass over a manifest's objects (drift/manifest-objects.ts: the cluster
// fit, the claims, the fields that cannot change, drift). Keyed by the document's text, so a value
// is the same whatever the stream it came in (the render and the stored record often hold the same
// document); bounded, so a release plan's many charts do not pile up. Frozen: a caller that
// changes a value it was given fails loudly instead of changing what the next step reads.
import { parseDocument } from 'yaml';
import { type ManifestPiece, parsePiece } from './manifest-stream.js';

const MAX_CHARS = 32 * 1024 * 1024;
const read = new Map<string, readonly unknown[]>();
let chars = 0;

/** The piece's documents as plain values (aliases unbounded), read-only. */
export function documentValues(piece: ManifestPiece): readonly unknown[] {
  const hit = read.get(piece.text);
  if (hit) return hit;
  const values = deepFreeze(parsePiece(piece).docs.map((doc) => valueOf(doc.toJS({ maxAliasCount: -1 }), piece.text)));
  if (chars + piece.text.length > MAX_CHARS) {
    read.clear();
    chars = 0;
  }
  read.set(piece.text, values);
  chars += piece.text.length;
  return values;
}

/** YAML 1.1 reads an unquoted 2026-11-24 as a timestamp; helm's go-yaml sent it as text. */
function valueOf(value: unknown, text: string): unknown {
  if (!hasDate(value)) return value;
  return parseDocument(text, { version: '1.1', uniqueKeys: false, customTags: withoutTimestamp }).toJS({
    maxAliasCount: -1,
  });
}

const withoutTimestamp = (tags: unknown[]) =>
  tags.filter((t) => (t as { tag?: string }).tag !== 'tag:yaml.org,2002:timestamp') as never;

function hasDate(v: unknown): boolean {
  if (v instanceof Date) return true;
  if (v === null || typeof v !== 'object') return false;
  return (Array.isArray(v) ? v : Object.values(v)).some(hasDate);
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const v of Object.values(value)) deepFreeze(v);
  return Object.freeze(value);
}
