// The values of a render's CRD documents, read once per run. An operator's chart renders
// megabytes of CRDs (10 of 2 MB in the bench), in the multi-line text the fast reader leaves to
// the library, and two steps need them whole: the RBAC preflight (the kinds each CRD defines) and
// the CRD step (the CRD itself). Each read took about 0.5 s of an upgrade; the second now finds the
// first's values. Keyed by the document's text, so a value is the same whatever the stream it came
// in; bounded, so a release plan's many charts do not pile up. The values are shared: read them,
// never change them (a caller that changes one copies it first).
import { type ManifestPiece, parsePiece } from './manifest-stream.js';

const MAX_CHARS = 32 * 1024 * 1024;
const read = new Map<string, unknown[]>();
let chars = 0;

/** The piece's documents as plain values (aliases unbounded, as the CRD step reads them). */
export function crdPieceValues(piece: ManifestPiece): readonly unknown[] {
  const hit = read.get(piece.text);
  if (hit) return hit;
  const values = parsePiece(piece).docs.map((d) => d.toJS({ maxAliasCount: -1 }) as unknown);
  if (chars + piece.text.length > MAX_CHARS) {
    read.clear();
    chars = 0;
  }
  read.set(piece.text, values);
  chars += piece.text.length;
  return values;
}
