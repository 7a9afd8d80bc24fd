// Rewrites the images of helm's rendered manifest stream for the local registry and adds the
// image pull secret to every pod spec, by text edits at node ranges (see text-edits.ts for why).
//
// Two passes over the documents, one parsed tree alive at a time: the first finds every image and
// pod spec and remembers only where to edit (rewrite-find.ts); the plan needs every image of the stream before it
// can name one (collisions), then the second pass splices the edits into each document's text.
// Memory is the pieces' text (none: the post-renderer reads it back from a spill file) plus the
// largest document's tree and the edits, whatever the stream's size.
import type { Scalar } from 'yaml';
import { UsageError } from '../common/errors.js';
import type { NamePart } from '../images/embedded-images.js';
import { namesTagOrDigest, withoutTag, type LocalRegistry } from '../common/image-reference.js';
import { buildImageCatalog, targetOf } from '../images/image-catalog.js';
import type { ImageOccurrence } from '../images/manifest-images.js';
import { splitManifestStream, type PieceSource } from '../rendered/manifest-stream.js';
import { PinMatcher } from './pin-fields.js';
import { FirstPass, SCALAR_TYPES, type EmbeddedEdit } from './rewrite-find.js';
import type { RewritePlan } from './rewrite-plan.js';
import { encodeSecretValue } from '../images/secret-data.js';
import { applyEdits, scalarEdit, type TextEdit } from '../rendered/text-edits.js';

interface ImageRewrite {
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
  if (
    plan.imagePullSecret !== undefined &&
    !(DNS_SUBDOMAIN.test(plan.imagePullSecret) && plan.imagePullSecret.length <= 253)
  ) {
    throw new UsageError(`Image pull secret name "${plan.imagePullSecret}" is not a valid Kubernetes object name`, {
      hint: 'Use the name of an existing docker-registry Secret: lowercase letters, digits, "-" and ".".',
    });
  }
  const collect = options.collect === true;
  const pins = plan.pins && plan.pins.objects.length > 0 ? new PinMatcher(plan.pins) : undefined;
  const found = new FirstPass(plan, pins, collect);
  for (let index = 0; index < pieces.length; index++) found.visit(pieces, index);
  const rewriteMap = rewritesOf(found, plan.registry);
  const rewrites = collect
    ? found.images.flatMap((o) => {
        const to = rewriteMap.get(o.image);
        return to === undefined ? [] : [{ from: o.image, to, kind: o.kind, name: o.name, path: o.path }];
      })
    : undefined;
  const splice = (asBytes: boolean) => spliceEdits(pieces, { found, rewriteMap, pins, asBytes });
  return {
    summary: summaryOf(found, rewriteMap, {
      documents: pieces.length,
      pins: pins !== undefined,
      annotate: plan.appSlug !== undefined,
    }),
    ...(collect ? { images: found.images, rewrites } : {}),
    output: () => splice(false) as Generator<string>,
    outputChunks: () => splice(true),
  };
}

/**
 * Each image's new reference. The same plan `images` and the preflight build (validation,
 * collisions, exact KOTS names), from the first place of each distinct image of each kind (an
 * image field, a flag, an env value, ConfigMap data, an artifact: what tells a name or an artifact
 * from an image): small whatever the stream's size.
 */
function rewritesOf(found: FirstPass, registry: LocalRegistry | undefined): Map<string, string> {
  const imagePlan = buildImageCatalog({
    occurrences: [...found.perImage.values()].flatMap(({ kinds }) => [...kinds.values()]),
    registries: found.registries,
    registry,
  });
  const rewriteMap = new Map<string, string>();
  for (const image of found.perImage.keys()) {
    const to = targetOf(imagePlan, image);
    if (to !== undefined) rewriteMap.set(image, to);
  }
  return rewriteMap;
}

function summaryOf(
  found: FirstPass,
  rewriteMap: Map<string, string>,
  o: { documents: number; pins: boolean; annotate: boolean },
): RewriteSummary {
  return {
    documents: o.documents,
    images: { occurrences: found.occurrences, distinct: found.perImage.size },
    rewrites: [...rewriteMap].map(([from, to]) => {
      const { count, first } = found.perImage.get(from)!;
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
    pullSecretsAdded: found.pullSecretsAdded,
    ...(o.pins ? { pinned: found.pinned.size } : {}),
    ...(o.annotate ? { annotated: found.annotated } : {}),
  };
}

/** Pass 2: splices each document's edits into its text, one document at a time, in order. */
function* spliceEdits(
  pieces: PieceSource,
  c: { found: FirstPass; rewriteMap: Map<string, string>; pins: PinMatcher | undefined; asBytes: boolean },
): Generator<string | Uint8Array> {
  const { pending, pinned } = c.found;
  let next = 0;
  for (let index = 0; index < pieces.length; index++) {
    if (
      c.asBytes &&
      pieces.chunksOf &&
      pending.piece[next] !== index &&
      !pinned.has(index) &&
      pieces.isCustomResourceDefinition?.(index)
    ) {
      yield* pieces.chunksOf(index);
      continue;
    }
    const piece = pieces.at(index)!;
    const edits: TextEdit[] = [];
    for (; next < pending.piece.length && pending.piece[next] === piece.index; next++) {
      const edit = editAt(c.found, next, c.rewriteMap, piece.text);
      if (edit) edits.push(edit);
    }
    const text = applyEdits(piece.text, edits);
    // Pinned after the image edits: a pinned field holds what is live, image or not.
    yield pinned.has(index) ? (c.pins!.pin({ ...piece, text })?.text ?? text) : text;
  }
}

/** The text edit of pass 1's edit number `i`, now that every image's new reference is known. */
function editAt(found: FirstPass, i: number, rewriteMap: Map<string, string>, text: string): TextEdit | undefined {
  const { pending } = found;
  const [start, end, style, value] = [pending.start[i]!, pending.end[i]!, pending.style[i]!, pending.text[i]!];
  if (style === -1) return { start, end, text: value };
  const inside = found.embedded.get(i);
  if (inside) return embeddedEdit(inside, { type: SCALAR_TYPES[style], start, end }, rewriteMap, text);
  const to = rewriteMap.get(value);
  return to === undefined ? undefined : scalarEdit({ type: SCALAR_TYPES[style], range: [start, end, end] }, to, text);
}

function embeddedEdit(
  inside: EmbeddedEdit,
  node: { type: Scalar['type']; start: number; end: number },
  rewriteMap: Map<string, string>,
  text: string,
): TextEdit | undefined {
  const spans = inside.spans.flatMap((s) => {
    const to = rewriteMap.get(s.image);
    // A name written without a tag (the tag set elsewhere, e.g. in another key) stays without one.
    return to === undefined
      ? []
      : [{ ...s, to: partOf(namesTagOrDigest(s.image) && !s.nameOnly ? to : withoutTag(to), s.part) }];
  });
  if (spans.length === 0) return undefined;
  // A Secret's data: the decoded text edited, then encoded again (its other bytes are the same).
  if (inside.base64)
    return scalarEdit(
      { type: node.type, range: [node.start, node.end, node.end] },
      encodeSecretValue(replaceSpans(inside.value, spans)),
      text,
    );
  return (
    substringEdit(inside.value, node, spans, text) ??
    scalarEdit({ type: node.type, range: [node.start, node.end, node.end] }, replaceSpans(inside.value, spans), text)
  );
}

/** An image given as registry and repository keys: the local name's address, or its last component. */
function partOf(name: string, part: NamePart | undefined): string {
  if (!part) return name;
  const slash = name.lastIndexOf('/');
  return part === 'registry' ? name.slice(0, Math.max(slash, 0)) : name.slice(slash + 1);
}

function replaceSpans(value: string, spans: { start: number; end: number; to: string }[]): string {
  let out = value;
  for (const span of [...spans].sort((a, b) => b.start - a.start))
    out = out.slice(0, span.start) + span.to + out.slice(span.end);
  return out;
}

/**
 * References inside a longer string: edit only their characters in the source when each appears
 * there verbatim exactly as often as it is rewritten (true of block, quoted and plain scalars
 * alike: a reference holds no character any style escapes or folds). The rest of the string, its
 * style and its line breaks stay as helm wrote them. Undefined when that cannot be shown.
 */
function substringEdit(
  value: string,
  node: { start: number; end: number },
  spans: { image: string; to: string }[],
  text: string,
): TextEdit | undefined {
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
