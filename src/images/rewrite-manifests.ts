// Rewrites the images of helm's rendered manifest stream for the local registry and adds the
// image pull secret to every pod spec, by text edits at node ranges (see text-edits.ts for why).
//
// Two passes over the documents, one parsed tree alive at a time: the first finds every image and
// pod spec and remembers only where to edit; the plan needs every image of the stream before it
// can name one (collisions), then the second pass splices the edits into each document's text.
// Memory is the input's text plus the largest document's tree, whatever the stream's size.
import { isMap, isScalar, isSeq, type Node, type Scalar, type YAMLMap } from 'yaml';
import { ExitCode, InstallerError, InvalidInputError, UsageError } from '../errors.js';
import { parseImageReference, planImageRewrites, type LocalRegistry } from './image-reference.js';
import {
  get,
  locateImages,
  locatePodSpecs,
  resolve,
  type ExtraImagePath,
  type ImageLocation,
  type ImageOccurrence,
  type ManifestStream,
  type PodSpecLocation,
} from './manifest-images.js';
import { parsePiece, splitManifestStream, type ManifestPiece } from './manifest-stream.js';
import { applyEdits, rangeOf, scalarEdit, type TextEdit } from './text-edits.js';

export interface RewritePlan {
  /** Where images go; without it images are left alone (pull secrets may still be added). */
  registry?: LocalRegistry;
  extraPaths: ExtraImagePath[];
  /** Name of a docker-registry Secret to add to every pod spec's imagePullSecrets. */
  imagePullSecret?: string;
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
}

export interface PreparedRewrite {
  summary: RewriteSummary;
  /** Every occurrence and rewrite, only when asked for (`collect`): they grow with the stream. */
  images?: ImageOccurrence[];
  rewrites?: ImageRewrite[];
  /** The rewritten stream, one document at a time, in order. */
  output(): Generator<string>;
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

// Rewritten references are validated object names, pull secret names must be too.
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function rewriteManifests(text: string, plan: RewritePlan): RewriteResult {
  const prepared = prepareRewrite(splitManifestStream(text), plan, { collect: true });
  return { output: [...prepared.output()].join(''), rewrites: prepared.rewrites!, images: prepared.images! };
}

export function prepareRewrite(pieces: ManifestPiece[], plan: RewritePlan, options: { collect?: boolean } = {}): PreparedRewrite {
  if (plan.imagePullSecret !== undefined && !(DNS_SUBDOMAIN.test(plan.imagePullSecret) && plan.imagePullSecret.length <= 253)) {
    throw new UsageError(`Image pull secret name "${plan.imagePullSecret}" is not a valid Kubernetes object name`, {
      hint: 'Use the name of an existing docker-registry Secret: lowercase letters, digits, "-" and ".".',
    });
  }
  const collect = options.collect === true;
  const images: ImageOccurrence[] = [];
  const perImage = new Map<string, { count: number; first: ImageLocation }>();
  const pending = new PendingEdits();
  let occurrences = 0;
  let pullSecretsAdded = 0;

  // Pass 1: find, validate, remember where to edit; the tree is dropped after each document.
  for (const piece of pieces) {
    const stream = parsePiece(piece);
    const locations = locateImages(stream, plan.extraPaths);
    const edited = new Set<Scalar>();
    for (const location of locations) {
      occurrences++;
      if (collect) {
        const { node: _node, ...occurrence } = location;
        images.push(occurrence);
      }
      const seen = perImage.get(location.image);
      if (seen) seen.count++;
      else perImage.set(location.image, { count: 1, first: location });
      if (!plan.registry) continue;
      validateAt(location);
      // One anchored scalar may be reached through several aliases: edit it once.
      if (edited.has(location.node)) continue;
      edited.add(location.node);
      const [start, end] = rangeOf(location.node);
      pending.add(piece.index, start, end, SCALAR_TYPES.indexOf(location.node.type), location.image);
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

  const rewriteMap = plan.registry ? planImageRewrites(perImage.keys(), plan.registry) : new Map<string, string>();
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
  };
  const rewrites = collect
    ? images.flatMap((o) => {
        const to = rewriteMap.get(o.image);
        return to === undefined ? [] : [{ from: o.image, to, kind: o.kind, name: o.name, path: o.path }];
      })
    : undefined;

  // Pass 2: splice each document's edits into its text.
  function* output(): Generator<string> {
    let next = 0;
    for (const piece of pieces) {
      const edits: TextEdit[] = [];
      for (; next < pending.piece.length && pending.piece[next] === piece.index; next++) {
        const [start, end, style, text] = [pending.start[next]!, pending.end[next]!, pending.style[next]!, pending.text[next]!];
        if (style === -1) {
          edits.push({ start, end, text });
          continue;
        }
        const to = rewriteMap.get(text);
        if (to !== undefined) edits.push(scalarEdit({ type: SCALAR_TYPES[style], range: [start, end, end] }, to, piece.text));
      }
      yield applyEdits(piece.text, edits);
    }
  }
  return { summary, ...(collect ? { images, rewrites } : {}), output };
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
