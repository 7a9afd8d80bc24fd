// The comparison at the heart of the drift check, pure: the object as the release's own server-
// side apply would leave it (a dry run, so the API server's defaults and webhooks are in it too)
// against the live object. Every leaf that differs is a field the release sets and someone else
// changed; fields the release does not set are the same in both and never show. Like Flux's
// jsondiff: of the metadata only labels and annotations count, and only values the release sets
// (controllers add their own labels); status never counts.
import { isSecretKey, MASK } from '../common/secrets.js';
import { formatPointer, parsePointer, removeAt } from './json-pointer.js';
import { fieldManager, sameJson } from './managed-fields.js';

export interface DriftedField {
  /** JSON pointer, e.g. /spec/template/spec/containers/0/image. */
  path: string;
  /** The values as text ('(absent)' when missing); '[REDACTED]' for secret material. */
  live: string;
  desired: string;
  /** Who owns the live value (managedFields), when known: "kubectl-set", "kubectl-edit", ... */
  manager?: string;
}

const ABSENT = '(absent)';
const MAX_VALUE_CHARS = 200;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Obj = Record<string, unknown>;

/**
 * The fields of `desired` (the dry-run result) that differ in `live`, minus the ignored paths.
 * `onlySet`: compare only the fields `desired` has, for a manifest object compared as written
 * (when the API server refused its dry run, there are no defaults to compare with).
 */
export function compareObjects(
  desired: Obj,
  live: Obj,
  ignored: readonly string[],
  o: { onlySet?: boolean } = {},
): DriftedField[] {
  const found = differences(desired, live, ignored, o);
  const kind = typeof live.kind === 'string' ? live.kind : String(desired.kind);
  return found.map((d) => {
    const secret = isSecretPath(kind, d.segments, live, desired);
    const manager = fieldManager(live, d.segments);
    return {
      path: formatPointer(d.segments),
      live: d.live === undefined ? ABSENT : secret ? MASK : renderValue(d.live),
      desired: d.desired === undefined ? ABSENT : secret ? MASK : renderValue(d.desired),
      ...(manager ? { manager } : {}),
    };
  });
}

/** The differing leaves with their raw values (for a repair; never for a message: not masked). */
export function differences(
  desired: Obj,
  live: Obj,
  ignored: readonly string[],
  o: { onlySet?: boolean } = {},
): Found[] {
  const found: Found[] = [];
  diffValues(comparable(live, ignored), comparable(desired, ignored), [], found, o.onlySet === true);
  return found;
}

/**
 * Pure. Every field `desired` sets (the manifest's object as written) has exactly that value in
 * `live`, lists whole (same length, item by item): applying it would change nothing, so no dry run
 * is needed to know there is no drift. False says only "ask the dry run": a default, a quantity
 * the API server wrote another way, an item another manager added to a list.
 */
export function setAsWritten(desired: Obj, live: Obj, ignored: readonly string[]): boolean {
  return holds(comparable(desired, ignored), comparable(live, ignored));
}

function holds(want: unknown, have: unknown): boolean {
  if (isMap(want)) return isMap(have) && Object.keys(want).every((k) => holds(want[k], have[k]));
  if (Array.isArray(want))
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => holds(w, have[i]));
  return sameJson(want, have);
}

/** A copy with only what counts: no status, of the metadata only labels and annotations. */
function comparable(o: Obj, ignored: readonly string[]): Obj {
  const { metadata, status: _status, ...rest } = structuredClone(o) as Obj & { metadata?: Obj };
  const out: Obj = { ...rest, metadata: { labels: metadata?.labels ?? {}, annotations: metadata?.annotations ?? {} } };
  // Removed from both sides before comparing, as Flux does: an ignored list item is spliced out
  // of both, so the items after it still line up.
  for (const path of ignored) removeAt(out, parsePointer(path));
  return out;
}

export type Found = { segments: string[]; live: unknown; desired: unknown };

function diffValues(live: unknown, desired: unknown, at: string[], out: Found[], onlySet: boolean): void {
  if (sameJson(live, desired)) return;
  // Labels and annotations others added are not the release's: only what it sets counts.
  if (desired === undefined && (onlySet || (at.length === 3 && at[0] === 'metadata'))) return;
  if (isMap(live) && isMap(desired)) {
    for (const key of [...new Set([...Object.keys(desired), ...Object.keys(live)])].sort())
      diffValues(live[key], desired[key], [...at, key], out, onlySet);
  } else if (Array.isArray(live) && Array.isArray(desired)) {
    for (let i = 0; i < Math.max(live.length, desired.length); i++)
      diffValues(live[i], desired[i], [...at, String(i)], out, onlySet);
  } else {
    out.push({ segments: at, live, desired });
  }
}

/**
 * Secret material: a Secret's data and stringData, anything under a secret-looking key, a list
 * item named like a secret (`env: [{name: DB_PASSWORD, value: ...}]`), and kubectl's
 * last-applied annotation (a copy of a whole object, Secrets included).
 */
export function isSecretPath(kind: string, segments: readonly string[], ...objects: unknown[]): boolean {
  if (kind === 'Secret' && (segments[0] === 'data' || segments[0] === 'stringData')) return true;
  if (segments.some((s) => s === LAST_APPLIED || isSecretKey(s))) return true;
  return objects.some((o) => namedLikeSecret(o, segments));
}

function namedLikeSecret(root: unknown, segments: readonly string[]): boolean {
  let node = root;
  // Items above the leaf only: a whole item that differs is shown with its secrets masked.
  for (const s of segments.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return false;
    node = (node as Obj)[s];
    const name = isMap(node) ? node.name : undefined;
    if (typeof name === 'string' && isSecretKey(name)) return true;
  }
  return false;
}

/** A value as one line of text, secret-looking parts of a structure masked, long ones cut. */
export function renderValue(v: unknown): string {
  const text = typeof v === 'string' ? v : JSON.stringify(maskStructure(v));
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}...` : text;
}

function maskStructure(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(maskStructure);
  if (!isMap(v)) return v;
  const secretItem = typeof v.name === 'string' && isSecretKey(v.name);
  const out: Obj = {};
  for (const [k, inner] of Object.entries(v))
    out[k] = isSecretKey(k) || k === LAST_APPLIED || (secretItem && k !== 'name') ? MASK : maskStructure(inner);
  return out;
}

function isMap(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
