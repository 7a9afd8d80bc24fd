// Pass 1 of the rewrite (rewrite-manifests.ts): find every image and pod spec of each document,
// validate it, and remember only where to edit. A document's tree is dropped before the next one
// is parsed; what is kept is small and detached from the document's text.
import type { Scalar } from 'yaml';
import { InvalidInputError } from '../common/errors.js';
import type { NamePart } from '../images/embedded-images.js';
import { parseImageReference } from '../common/image-reference.js';
import {
  locateAll,
  locatePodSpecs,
  mayHoldImages,
  type ImageLocation,
  type ImageOccurrence,
  type ManifestStream,
  type RegistryOnlyOccurrence,
} from '../images/manifest-images.js';
import {
  isCustomResourceDefinition,
  parsePiece,
  type ParsedPiece,
  type PieceSource,
} from '../rendered/manifest-stream.js';
import type { PinMatcher } from './pin-fields.js';
import { addPullSecret } from './pull-secret-edit.js';
import { rangeOf } from '../rendered/text-edits.js';
import { annotationEdits } from './annotate.js';
import { APP_SLUG_ANNOTATION } from '../common/app-slug.js';
import type { RewritePlan } from './rewrite-plan.js';

/**
 * Every edit of pass 1, in stream order, in flat arrays: a stream of 50 MB holds a few hundred
 * thousand, and an object plus a list per document cost several times what the input does.
 * An image edit's text is its image (the new reference is known only after the plan); a pull
 * secret edit's text is final (and shared: it only varies with the indentation).
 */
class PendingEdits {
  readonly piece: number[] = [];
  readonly start: number[] = [];
  readonly end: number[] = [];
  /** -1: `text` is the final text; else the index in SCALAR_TYPES of the image scalar's style. */
  readonly style: number[] = [];
  readonly text: string[] = [];
  private readonly interned = new Map<string, string>();

  add(piece: number, start: number, end: number, style: number, text: string): void {
    this.piece.push(piece);
    this.start.push(start);
    this.end.push(end);
    this.style.push(style);
    if (style === -1) {
      const shared = this.interned.get(text);
      if (shared === undefined) this.interned.set(text, text);
      else text = shared;
    }
    this.text.push(text);
  }
}
export const SCALAR_TYPES: Scalar['type'][] = [
  'PLAIN',
  'QUOTE_SINGLE',
  'QUOTE_DOUBLE',
  'BLOCK_LITERAL',
  'BLOCK_FOLDED',
  undefined,
];

/**
 * A scalar holding references inside a longer string (a flag, an env value, ConfigMap data): its
 * value and where each reference sits in it. Few per stream, so kept beside the flat arrays,
 * keyed by the index of its pending edit (whose text is then unused).
 */
export interface EmbeddedEdit {
  /** The string the spans index (for a Secret's `data`, decoded). */
  value: string;
  spans: { start: number; end: number; image: string; nameOnly?: true; part?: NamePart }[];
  /** A Secret's `data` value: the edited text is base64-encoded again. */
  base64?: true;
}

/** Per distinct image: how often it occurs, and its first place of each kind (occurrenceKind). */
export interface ImageCount {
  count: number;
  first: ImageOccurrence;
  kinds: Map<string, ImageOccurrence>;
}

/** What pass 1 found in the whole stream; pass 2 (rewrite-manifests.ts) splices its edits. */
export class FirstPass {
  /** Indexes of the pieces that hold a pinned object, found here, pinned in pass 2. */
  readonly pinned = new Set<number>();
  /** Every occurrence, only when collecting: they grow with the stream. */
  readonly images: ImageOccurrence[] = [];
  readonly perImage = new Map<string, ImageCount>();
  readonly pending = new PendingEdits();
  readonly embedded = new Map<number, EmbeddedEdit>();
  readonly registries: RegistryOnlyOccurrence[] = [];
  occurrences = 0;
  pullSecretsAdded = 0;
  annotated = 0;
  private readonly names = new Interned();
  // Pins or the slug alone rewrite no image: the search (and its validation of every reference) is skipped.
  private readonly searchImages: boolean;
  // A CRD is searched only when an extra path names the kind (mayHoldImages).
  private readonly crdsSearched: boolean;

  constructor(
    private readonly plan: RewritePlan,
    private readonly pins: PinMatcher | undefined,
    private readonly collect: boolean,
  ) {
    this.searchImages =
      plan.registry !== undefined ||
      plan.imagePullSecret !== undefined ||
      (pins === undefined && plan.appSlug === undefined);
    this.crdsSearched = plan.extraPaths.some((e) => e.kind === 'CustomResourceDefinition');
  }

  /** Looks at one document. A source that told CRDs apart as they arrived (the spill file) is not even read for one. */
  visit(pieces: PieceSource, index: number): void {
    const { plan, pins } = this;
    const isCrd = pieces.isCustomResourceDefinition?.(index);
    const search = this.searchImages && !(!this.crdsSearched && isCrd);
    const pin = pins !== undefined && !(!pins.pinsCustomResourceDefinitions && isCrd);
    // Not a CRD: KOTS never deletes a cluster-scoped object, and CRDs from crds/ never reach a
    // post-renderer, so annotating the rest would only cost the parse the pass-through saves.
    const annotate =
      plan.appSlug !== undefined &&
      isCrd !== true &&
      !(isCrd === undefined && isCustomResourceDefinition(pieces.at(index)!.text));
    if (!search && !pin && !annotate) return;
    const piece = pieces.at(index)!;
    let parsed: ParsedPiece | undefined;
    if (pin && pins.mayMatch(piece)) {
      parsed = parsePiece(piece);
      if (pins.matches(piece, parsed)) this.pinned.add(index);
    }
    if (annotate) {
      parsed ??= parsePiece(piece);
      for (const edit of annotationEdits(parsed, APP_SLUG_ANNOTATION, plan.appSlug!)) {
        this.pending.add(piece.index, edit.start, edit.end, -1, edit.text);
        this.annotated++;
      }
    }
    // Left as it is (pass 2 copies its text): no image can be found in it.
    if (!search || !mayHoldImages(piece, plan.extraPaths)) return;
    const stream = parsed ?? parsePiece(piece);
    this.findImages(stream, piece.index);
    if (plan.imagePullSecret !== undefined) {
      for (const spec of locatePodSpecs(stream)) {
        const edit = addPullSecret(stream, spec, plan.imagePullSecret);
        if (edit) {
          this.pending.add(piece.index, edit.start, edit.end, -1, edit.text);
          this.pullSecretsAdded++;
        }
      }
    }
  }

  private findImages(stream: ManifestStream, piece: number): void {
    const located = locateAll(stream, this.plan.extraPaths);
    this.registries.push(...located.registries.map(detached));
    const edited = new Set<Scalar>();
    const embeddedOf = new Map<Scalar, EmbeddedEdit>();
    for (const location of located.images) {
      const image = this.count(location);
      if (!this.plan.registry) continue;
      validateAt(location);
      if (location.span) {
        this.editEmbedded(location, image, piece, embeddedOf);
        continue;
      }
      // One anchored scalar may be reached through several aliases: edit it once.
      if (edited.has(location.node)) continue;
      edited.add(location.node);
      const [start, end] = rangeOf(location.node);
      // The interned copy: a view into this document would keep its whole text alive.
      this.pending.add(piece, start, end, SCALAR_TYPES.indexOf(location.node.type), image);
    }
  }

  /** Counts an occurrence and keeps the first of its kind; returns the image's interned name. */
  private count(location: ImageLocation): string {
    this.occurrences++;
    if (this.collect) this.images.push(occurrenceOf(location));
    const image = this.names.intern(location.image);
    const seen = this.perImage.get(image);
    const kind = occurrenceKind(location);
    if (seen) seen.count++;
    if (!seen?.kinds.has(kind)) {
      const copy = { ...detached(occurrenceOf(location)), image };
      if (seen) seen.kinds.set(kind, copy);
      else this.perImage.set(image, { count: 1, first: copy, kinds: new Map([[kind, copy]]) });
    }
    return image;
  }

  /** References inside one string are edited together, in one edit of that scalar. */
  private editEmbedded(
    location: ImageLocation,
    image: string,
    piece: number,
    embeddedOf: Map<Scalar, EmbeddedEdit>,
  ): void {
    let edit = embeddedOf.get(location.node);
    if (!edit) {
      const decoded = location.span!.decoded;
      edit =
        decoded === undefined
          ? { value: detached(String(location.node.value)), spans: [] }
          : { value: detached(decoded), spans: [], base64: true };
      embeddedOf.set(location.node, edit);
      const [start, end] = rangeOf(location.node);
      this.embedded.set(this.pending.piece.length, edit);
      this.pending.add(piece, start, end, SCALAR_TYPES.indexOf(location.node.type), '');
    }
    const { start, end, nameOnly, part } = location.span!;
    if (!edit.spans.some((s) => s.start === start))
      edit.spans.push({ start, end, image, ...(nameOnly ? { nameOnly } : {}), ...(part ? { part } : {}) });
  }
}

/**
 * A copy (of a string, or of plain data holding strings) that does not keep its document alive.
 * V8 cuts substrings as views into the string they came from, so one image name kept from each
 * document (the edits of pass 1) kept every document's whole text in the heap: the
 * post-renderer's memory grew with the stream although the stream itself sits in a spill file.
 * What is kept is few and short: copy it.
 */
function detached<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** What the plan tells occurrences apart by: the string an image sits in, and whether it is an artifact. */
function occurrenceKind(location: ImageLocation): string {
  return `${location.embedded ?? 'field'}${location.artifact ? ' artifact' : ''}`;
}

/** An image location without its tree: the node and span point into the parsed document. */
function occurrenceOf(location: ImageLocation): ImageOccurrence {
  const { node: _node, span: _span, ...occurrence } = location;
  return occurrence;
}

/** One detached copy per distinct string, however often it is kept. */
class Interned {
  private readonly copies = new Map<string, string>();

  intern(text: string): string {
    let copy = this.copies.get(text);
    if (copy === undefined) {
      copy = detached(text);
      this.copies.set(copy, copy);
    }
    return copy;
  }
}

/** Invalid references are reported with the document, object and line they came from. */
function validateAt(location: ImageLocation): void {
  try {
    parseImageReference(location.image);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new InvalidInputError(
      `${error.message} (document ${location.document + 1}: ${location.kind} "${location.name}", ${location.path}, line ${location.line} of the rendered manifests)`,
      { file: location.source, key: location.path, hint: error.hint },
    );
  }
}
