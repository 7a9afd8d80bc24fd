// A manifest's objects whose apiVersion the cluster no longer serves, mapped to the version that
// replaced it (removed-apis.ts), pure. Two users: a stored release record, rewritten in place as
// helm-mapkubeapis does (a kind removed with no successor, PodSecurityPolicy, is dropped from the
// record: helm then deletes nothing, as the cluster no longer has it); and a new render, refused
// before helm when it names such a version (the chart must change, not the record).
import { isMap, isScalar, type Document } from 'yaml';
import { parsePiece, sourceComment, splitManifestStream } from '../rendered/manifest-stream.js';
import { successorServed, type Served } from './removed-apis.js';

/** One object of a manifest and what its apiVersion becomes. `to: null`: dropped. */
export interface ApiMapping {
  kind: string;
  name: string;
  namespace?: string;
  from: string;
  to: string | null;
  removedIn: string;
  /** The template it came from (helm's `# Source:` comment), when it says. */
  source?: string;
}

/**
 * Pure. The manifest with every mappable object's apiVersion replaced in its text (the value's own
 * bytes, so everything else stays as helm stored it) and every object of a kind removed without
 * a successor cut out, and the mappings made, in the manifest's order.
 */
export function mapRemovedApis(manifest: string, served: Served): { manifest: string; mappings: ApiMapping[] } {
  // Most records name no version of the table: nothing is parsed for them.
  if (!mentionsRemovable(manifest)) return { manifest, mappings: [] };
  const mappings: ApiMapping[] = [];
  const out: string[] = [];
  for (const piece of splitManifestStream(manifest)) {
    const docs = parsePiece(piece).docs;
    // A piece of several documents (a `...` marker) is left whole: helm never writes one.
    const found = docs.length === 1 ? mappingOf(docs[0]!, served) : undefined;
    if (!found) {
      out.push(piece.text);
      continue;
    }
    const mapping: ApiMapping = { ...found.mapping, ...(sourceOf(piece.text) ? { source: sourceOf(piece.text) } : {}) };
    mappings.push(mapping);
    if (mapping.to === null) continue;
    const [start, end] = found.range;
    out.push(piece.text.slice(0, start) + mapping.to + piece.text.slice(end));
  }
  return { manifest: mappings.length > 0 ? out.join('') : manifest, mappings };
}

/** Pure: the objects of a render whose apiVersion the cluster does not serve but the table maps (the same test, nothing rewritten). */
export function unservedObjects(manifest: string, served: Served): ApiMapping[] {
  return mapRemovedApis(manifest, served).mappings;
}

// Every version in the table is a beta one: a manifest with no `apiVersion: .../vNbetaM` has none.
const ANY_REMOVABLE = /apiVersion:\s*["']?[\w.-]+\/v\d+beta\d/;

/** Pure and cheap: whether a manifest names a version the table could map (every one is a beta). */
export function mentionsRemovable(manifest: string): boolean {
  return ANY_REMOVABLE.test(manifest);
}

function sourceOf(text: string): string | undefined {
  return sourceComment(text);
}

function mappingOf(
  doc: Document.Parsed,
  served: Served,
): { mapping: Omit<ApiMapping, 'source'>; range: [number, number] } | undefined {
  const root = doc.contents;
  if (!isMap(root)) return undefined;
  const version = root.items.find((p) => isScalar(p.key) && p.key.value === 'apiVersion')?.value;
  const kind = root.get('kind');
  if (!isScalar(version) || typeof version.value !== 'string' || typeof kind !== 'string' || !version.range)
    return undefined;
  const successor = successorServed(version.value, kind, served);
  if (!successor) return undefined;
  const metadata = root.get('metadata');
  const name = isMap(metadata) ? metadata.get('name') : undefined;
  const namespace = isMap(metadata) ? metadata.get('namespace') : undefined;
  // A quoted value keeps its quotes around the new text; range[1] ends the value, not its trailing comment.
  const [start, end] = version.range;
  const quoted = version.type === 'QUOTE_DOUBLE' || version.type === 'QUOTE_SINGLE';
  return {
    mapping: {
      kind,
      name: String(name ?? ''),
      ...(typeof namespace === 'string' ? { namespace } : {}),
      from: version.value,
      to: successor.to,
      removedIn: successor.removedIn,
    },
    range: quoted ? [start + 1, end - 1] : [start, end],
  };
}

/** Pure: one mapping as a person reads it (`PodDisruptionBudget/web: policy/v1beta1 -> policy/v1 (removed in Kubernetes 1.25)`). */
export function describeMapping(m: ApiMapping): string {
  const object = `${m.kind}/${m.namespace ? `${m.namespace}/` : ''}${m.name}`;
  return m.to === null
    ? `${object}: ${m.from} dropped from the record (removed in Kubernetes ${m.removedIn} with no successor)`
    : `${object}: ${m.from} -> ${m.to} (${m.from} removed in Kubernetes ${m.removedIn})`;
}
