// Rewrites the images of helm's rendered manifest stream for the local registry and adds the
// image pull secret to every pod spec, by text edits at node ranges (see text-edits.ts for why).
//
// Two passes over the documents, one parsed tree alive at a time: the first finds every image and
// pod spec and remembers only where to edit; the plan needs every image of the stream before it
// can name one (collisions), then the second pass splices the edits into each document's text.
// Memory is the pieces' text (none: the post-renderer reads it back from a spill file) plus the
// largest document's tree and the edits, whatever the stream's size.
import { isMap, isScalar, isSeq, type Node, type Scalar, type YAMLMap } from 'yaml';
import { ExitCode, InstallerError, InvalidInputError, UsageError } from '../errors.js';
import { namesTagOrDigest, parseImageReference, withoutTag, type LocalRegistry } from './image-reference.js';
import { buildImagePlan, targetOf } from './image-plan.js';
import {
  get,
  locateAll,
  locatePodSpecs,
  mayHoldImages,
  resolve,
  type ExtraImagePath,
  type ImageLocation,
  type ImageOccurrence,
  type ManifestStream,
  type PodSpecLocation,
  type RegistryOnlyOccurrence,
} from './manifest-images.js';
import { isCustomResourceDefinition, parsePiece, splitManifestStream, type ParsedPiece, type PieceSource } from './manifest-stream.js';
import { PinMatcher, type PinPlan } from './pin-fields.js';
import { applyEdits, rangeOf, scalarEdit, type TextEdit } from './text-edits.js';
import { annotationEdits, APP_SLUG_ANNOTATION } from './annotate.js';

export interface RewritePlan {
  /** Where images go; without it images are left alone (pull secrets may still be added). */
  registry?: LocalRegistry;
  extraPaths: ExtraImagePath[];
  /** Name of a docker-registry Secret to add to every pod spec's imagePullSecrets. */
  imagePullSecret?: string;
  /**
   * Fields of rendered objects set to their live values (pin-fields.ts): what something else owns
   * (drift ignore rules), so that helm's upgrade changes nothing there. A plan with pins and
   * neither a registry nor a pull secret only pins: images are not even looked for.
   */
  pins?: PinPlan;
  /**
   * The KOTS app slug, set as the `kots.io/app-slug` annotation of every object but CRDs
   * (annotate.ts), so that `kubectl kots remove --undeploy` removes them.
   */
  appSlug?: string;
}

export interface ImageRewrite {
  from: string;
  to: string;
  kind: string;
  name: string;
  path: string;
}

export interface RewriteResult {
  output: string;
  rewrites: ImageRewrite[];
  /** Every image found, before rewriting. */
  images: ImageOccurrence[];
}

/** What a run did, small whatever the stream's size: counts, and each distinct rewrite once. */
export interface RewriteSummary {
  documents: number;
  /** Image fields found, and how many distinct references they hold. */
  images: { occurrences: number; distinct: number };
  /** One entry per distinct rewritten reference, with its first place and how often it occurs. */
  rewrites: (ImageRewrite & { count: number; document: number; source?: string })[];
  pullSecretsAdded: number;
  /** Documents that match a pinned object (with pins only). */
  pinned?: number;
  /** Objects given the app slug annotation (with appSlug only). */
  annotated?: number;
}

export interface PreparedRewrite {
  summary: RewriteSummary;
  /** Every occurrence and rewrite, only when asked for (`collect`): they grow with the stream. */
  images?: ImageOccurrence[];
  rewrites?: ImageRewrite[];
  /** The rewritten stream, one document at a time, in order. */
  output(): Generator<string>;
  /**
   * The same stream, but a CRD left as it is comes as its bytes, a small chunk at a time, when
   * the source can give them (the post-renderer's spill file): a 1.4 MB CRD never becomes a
   * string, nor one buffer, on its way out. A chunk may end inside a UTF-8 character.
   */
  outputChunks(): Generator<string | Uint8Array>;
}


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
const SCALAR_TYPES: Scalar['type'][] = ['PLAIN', 'QUOTE_SINGLE', 'QUOTE_DOUBLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED', undefined];

/**
 * A scalar holding references inside a longer string (a flag, an env value, ConfigMap data): its
 * value and where each reference sits in it. Few per stream, so kept beside the flat arrays,
 * keyed by the index of its pending edit (whose text is then unused).
 */
interface EmbeddedEdit {
  value: string;
  spans: { start: number; end: number; image: string }[];
}

// Rewritten references are validated object names, pull secret names must be too.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function rewriteManifests(text: string, plan: RewritePlan): RewriteResult {
  const prepared = prepareRewrite(splitManifestStream(text), plan, { collect: true });
  return { output: [...prepared.output()].join(''), rewrites: prepared.rewrites!, images: prepared.images! };
}

export function prepareRewrite(
  pieces: PieceSource,
  plan: RewritePlan,
  options: { collect?: boolean } = {},
): PreparedRewrite {
  if (plan.imagePullSecret !== undefined && !(DNS_SUBDOMAIN.test(plan.imagePullSecret) && plan.imagePullSecret.length <= 253)) {
    throw new UsageError(`Image pull secret name "${plan.imagePullSecret}" is not a valid Kubernetes object name`, {
      hint: 'Use the name of an existing docker-registry Secret: lowercase letters, digits, "-" and ".".',
    });
  }
  const collect = options.collect === true;
  const pins = plan.pins && plan.pins.objects.length > 0 ? new PinMatcher(plan.pins) : undefined;
  // Pins or the slug alone rewrite no image: the search (and its validation of every reference) is skipped.
  const searchImages = plan.registry !== undefined || plan.imagePullSecret !== undefined || (pins === undefined && plan.appSlug === undefined);
  /** Indexes of the pieces that hold a pinned object, found in pass 1, pinned in pass 2. */
  const pinned = new Set<number>();
  const images: ImageOccurrence[] = [];
  const perImage = new Map<string, { count: number; first: ImageOccurrence; kinds: Map<string, ImageOccurrence> }>();
  const names = new Interned();
  const pending = new PendingEdits();
  const embedded = new Map<number, EmbeddedEdit>();
  const registries: RegistryOnlyOccurrence[] = [];
  let occurrences = 0;
  let pullSecretsAdded = 0;
  let annotated = 0;

  // A CRD is searched only when an extra path names the kind (mayHoldImages); a source that told
  // CRDs apart as they arrived (the spill file) is not even read for one.
  const crdsSearched = plan.extraPaths.some((e) => e.kind === 'CustomResourceDefinition');
  // Pass 1: find, validate, remember where to edit; the tree is dropped after each document.
  for (let index = 0; index < pieces.length; index++) {
    const isCrd = pieces.isCustomResourceDefinition?.(index);
    const search = searchImages && !(!crdsSearched && isCrd);
    const pin = pins !== undefined && !(!pins.pinsCustomResourceDefinitions && isCrd);
    // Not a CRD: KOTS never deletes a cluster-scoped object, and CRDs from crds/ never reach a
    // post-renderer, so annotating the rest would only cost the parse the pass-through saves.
    const annotate = plan.appSlug !== undefined && isCrd !== true && !(isCrd === undefined && isCustomResourceDefinition(pieces.at(index)!.text));
    if (!search && !pin && !annotate) continue;
    const piece = pieces.at(index)!;
    let parsed: ParsedPiece | undefined;
    if (pin && pins.mayMatch(piece)) {
      parsed = parsePiece(piece);
      if (pins.matches(piece, parsed)) pinned.add(index);
    }
    if (annotate) {
      parsed ??= parsePiece(piece);
      for (const edit of annotationEdits(parsed, APP_SLUG_ANNOTATION, plan.appSlug!)) {
        pending.add(piece.index, edit.start, edit.end, -1, edit.text);
        annotated++;
      }
    }
    // Left as it is (pass 2 copies its text): no image can be found in it.
    if (!search || !mayHoldImages(piece, plan.extraPaths)) continue;
    const stream = parsed ?? parsePiece(piece);
    const located = locateAll(stream, plan.extraPaths);
    const locations = located.images;
    registries.push(...located.registries.map(detached));
    const edited = new Set<Scalar>();
    const embeddedOf = new Map<Scalar, EmbeddedEdit>();
    for (const location of locations) {
      occurrences++;
      if (collect) images.push(occurrenceOf(location));
      const image = names.intern(location.image);
      const seen = perImage.get(image);
      const kind = occurrenceKind(location);
      if (seen) seen.count++;
      if (!seen?.kinds.has(kind)) {
        const copy = { ...detached(occurrenceOf(location)), image };
        if (seen) seen.kinds.set(kind, copy);
        else perImage.set(image, { count: 1, first: copy, kinds: new Map([[kind, copy]]) });
      }
      if (!plan.registry) continue;
      validateAt(location);
      if (location.span) {
        // References inside one string are edited together, in one edit of that scalar.
        let edit = embeddedOf.get(location.node);
        if (!edit) {
          edit = { value: detached(String(location.node.value)), spans: [] };
          embeddedOf.set(location.node, edit);
          const [start, end] = rangeOf(location.node);
          embedded.set(pending.piece.length, edit);
          pending.add(piece.index, start, end, SCALAR_TYPES.indexOf(location.node.type), '');
        }
        if (!edit.spans.some((s) => s.start === location.span!.start)) edit.spans.push({ ...location.span, image });
        continue;
      }
      // One anchored scalar may be reached through several aliases: edit it once.
      if (edited.has(location.node)) continue;
      edited.add(location.node);
      const [start, end] = rangeOf(location.node);
      // The interned copy: a view into this document would keep its whole text alive.
      pending.add(piece.index, start, end, SCALAR_TYPES.indexOf(location.node.type), image);
    }
    if (plan.imagePullSecret !== undefined) {
      for (const spec of locatePodSpecs(stream)) {
        const edit = addPullSecret(stream, spec, plan.imagePullSecret);
        if (edit) {
          pending.add(piece.index, edit.start, edit.end, -1, edit.text);
          pullSecretsAdded++;
        }
      }
    }
  }

  // The same plan `images` and the preflight build (validation, collisions, exact KOTS names),
  // from the first place of each distinct image of each kind (an image field, a flag, an env
  // value, ConfigMap data, an artifact: what tells a name or an artifact from an image): small
  // whatever the stream's size.
  const imagePlan = buildImagePlan({
    occurrences: [...perImage.values()].flatMap(({ kinds }) => [...kinds.values()]),
    registries,
    registry: plan.registry,
  });
  const rewriteMap = new Map<string, string>();
  for (const image of perImage.keys()) {
    const to = targetOf(imagePlan, image);
    if (to !== undefined) rewriteMap.set(image, to);
  }
  const summary: RewriteSummary = {
    documents: pieces.length,
    images: { occurrences, distinct: perImage.size },
    rewrites: [...rewriteMap].map(([from, to]) => {
      const { count, first } = perImage.get(from)!;
      return {
        from,
        to,
        kind: first.kind,
        name: first.name,
        path: first.path,
        count,
        document: first.document,
        ...(first.source !== undefined ? { source: first.source } : {}),
      };
    }),
    pullSecretsAdded,
    ...(pins ? { pinned: pinned.size } : {}),
    ...(plan.appSlug !== undefined ? { annotated } : {}),
  };
  const rewrites = collect
    ? images.flatMap((o) => {
        const to = rewriteMap.get(o.image);
        return to === undefined ? [] : [{ from: o.image, to, kind: o.kind, name: o.name, path: o.path }];
      })
    : undefined;

  // Pass 2: splice each document's edits into its text.
  function* output(asBytes: boolean): Generator<string | Uint8Array> {
    let next = 0;
    for (let index = 0; index < pieces.length; index++) {
      if (asBytes && pieces.chunksOf && pending.piece[next] !== index && !pinned.has(index) && pieces.isCustomResourceDefinition?.(index)) {
        yield* pieces.chunksOf(index);
        continue;
      }
      const piece = pieces.at(index)!;
      const edits: TextEdit[] = [];
      for (; next < pending.piece.length && pending.piece[next] === piece.index; next++) {
        const [start, end, style, text] = [pending.start[next]!, pending.end[next]!, pending.style[next]!, pending.text[next]!];
        if (style === -1) {
          edits.push({ start, end, text });
          continue;
        }
        const inside = embedded.get(next);
        if (inside) {
          const edit = embeddedEdit(inside, { type: SCALAR_TYPES[style], start, end }, rewriteMap, piece.text);
          if (edit) edits.push(edit);
          continue;
        }
        const to = rewriteMap.get(text);
        if (to !== undefined) edits.push(scalarEdit({ type: SCALAR_TYPES[style], range: [start, end, end] }, to, piece.text));
      }
      const text = applyEdits(piece.text, edits);
      // Pinned after the image edits: a pinned field holds what is live, image or not.
      yield pinned.has(index) ? (pins!.pin({ ...piece, text })?.text ?? text) : text;
    }
  }
  return {
    summary,
    ...(collect ? { images, rewrites } : {}),
    output: output.bind(undefined, false) as () => Generator<string>,
    outputChunks: () => output(true),
  };
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

function embeddedEdit(inside: EmbeddedEdit, node: { type: Scalar['type']; start: number; end: number }, rewriteMap: Map<string, string>, text: string): TextEdit | undefined {
  const spans = inside.spans.flatMap((s) => {
    const to = rewriteMap.get(s.image);
    // A name written without a tag (the tag set elsewhere, e.g. in another key) stays without one.
    return to === undefined ? [] : [{ ...s, to: namesTagOrDigest(s.image) ? to : withoutTag(to) }];
  });
  if (spans.length === 0) return undefined;
  return substringEdit(inside.value, node, spans, text) ?? scalarEdit({ type: node.type, range: [node.start, node.end, node.end] }, replaceSpans(inside.value, spans), text);
}

function replaceSpans(value: string, spans: { start: number; end: number; to: string }[]): string {
  let out = value;
  for (const span of [...spans].sort((a, b) => b.start - a.start)) out = out.slice(0, span.start) + span.to + out.slice(span.end);
  return out;
}

/**
 * References inside a longer string: edit only their characters in the source when each appears
 * there verbatim exactly as often as it is rewritten (true of block, quoted and plain scalars
 * alike: a reference holds no character any style escapes or folds). The rest of the string, its
 * style and its line breaks stay as helm wrote them. Undefined when that cannot be shown.
 */
function substringEdit(value: string, node: { start: number; end: number }, spans: { image: string; to: string }[], text: string): TextEdit | undefined {
  const source = text.slice(node.start, node.end);
  const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;
  const froms = [...new Set(spans.map((s) => s.image))];
  for (const from of froms) {
    const rewritten = spans.filter((s) => s.image === from).length;
    if (count(source, from) !== rewritten || count(value, from) !== rewritten) return undefined;
    if (froms.some((other) => other !== from && other.includes(from))) return undefined;
  }
  let edited = source;
  for (const from of froms) edited = edited.split(from).join(spans.find((s) => s.image === from)!.to);
  return { start: node.start, end: node.end, text: edited };
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

function addPullSecret(stream: ManifestStream, spec: PodSpecLocation, secret: string): TextEdit | undefined {
  const { text } = stream;
  const doc = spec.doc;
  const entry = `{name: ${JSON.stringify(secret)}}`;
  const existing = get(spec.node, 'imagePullSecrets', doc);
  const pair = spec.node.items.findLast((p) => isScalar(p.key) && p.key.value === 'imagePullSecrets');
  const hasPair = pair !== undefined;

  if (hasPair && isSeq(existing)) {
    const named = existing.items.some((item) => {
      const entryNode = resolve(item, doc);
      return isMap(entryNode) && get(entryNode, 'name', doc)?.toJSON() === secret;
    });
    if (named) return undefined;
    const [start] = rangeOf(existing);
    if (existing.flow) {
      expectChar(text, start, '[', spec);
      return { start: start + 1, end: start + 1, text: existing.items.length > 0 ? `${entry}, ` : entry };
    }
    expectChar(text, start, '-', spec);
    return { start, end: start, text: `- name: ${JSON.stringify(secret)}\n${' '.repeat(columnOf(text, start))}` };
  }
  if (hasPair && (existing === undefined || (isScalar(existing) && existing.value === null))) {
    // `imagePullSecrets:` with nothing after it (an empty range) or an explicit `~`/`null`.
    const [start, end] = existing ? rangeOf(existing) : [rangeOf(pair.key as Node)[1], rangeOf(pair.key as Node)[1]];
    if (start !== end) return { start, end, text: `[${entry}]` };
    // Inserted into `key:` or `key: # comment`: keep a blank before the list and before a `#`.
    const before = /\s/.test(text[start - 1] ?? '') ? '' : ' ';
    const after = text[start] === '#' ? ' ' : '';
    return { start, end, text: `${before}[${entry}]${after}` };
  }
  if (hasPair) {
    throw new InvalidInputError(`imagePullSecrets of ${spec.kind} "${spec.name}" (${spec.path}) is not a list`, {
      file: spec.source,
      key: `${spec.path}.imagePullSecrets`,
      hint: 'Render imagePullSecrets as a list of {name: <secret>} entries.',
    });
  }
  if (existing !== undefined) return undefined; // came in through a `<<` merge: leave the shared map alone

  const [start] = rangeOf(spec.node);
  if (spec.node.flow) {
    expectChar(text, start, '{', spec);
    return { start: start + 1, end: start + 1, text: `imagePullSecrets: [${entry}]${spec.node.items.length > 0 ? ', ' : ''}` };
  }
  // Block map: a new first pair, at the column of the current first key.
  const [keyStart] = rangeOf(keyOf(spec.node));
  const indent = ' '.repeat(columnOf(text, keyStart));
  return { start: keyStart, end: keyStart, text: `imagePullSecrets:\n${indent}- name: ${JSON.stringify(secret)}\n${indent}` };
}

function keyOf(map: YAMLMap): Node {
  const key = map.items[0]?.key;
  if (!key || !isScalar(key)) throw new InstallerError(ExitCode.internal, 'Internal error: a pod spec map without a plain first key');
  return key;
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

function expectChar(text: string, offset: number, char: string, spec: PodSpecLocation): void {
  if (text[offset] !== char) {
    throw new InstallerError(ExitCode.internal, `Internal error: expected "${char}" at line ${spec.line} of ${spec.kind} "${spec.name}"`);
  }
}
