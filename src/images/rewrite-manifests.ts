// Rewrites the images of helm's rendered manifest stream for the local registry and adds the
// image pull secret to every pod spec.
//
// Why text edits at node ranges instead of Document.toString(): the `yaml` printer re-renders
// every scalar from its value (0x1F -> 0x1f, 1e3 -> 1e+3, folded `>` blocks refolded, sequences
// re-indented, comment placement shifted). Helm's consumers read YAML 1.1 through go-yaml, so a
// re-rendered `0777`, `yes` or `12:30` could change meaning. We locate nodes with the Document
// API and splice new text into the original at their source ranges: every byte we did not mean
// to change stays as helm wrote it.
import { isMap, isScalar, isSeq, type Node, type Scalar, type YAMLMap } from 'yaml';
import { ExitCode, InstallerError, InvalidInputError, UsageError } from '../errors.js';
import { parseImageReference, planImageRewrites, type LocalRegistry } from './image-reference.js';
import {
  get,
  locateImages,
  locatePodSpecs,
  parseManifestStream,
  resolve,
  type ExtraImagePath,
  type ImageLocation,
  type ImageOccurrence,
  type ManifestStream,
  type PodSpecLocation,
} from './manifest-images.js';

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

interface TextEdit {
  start: number;
  end: number;
  text: string;
}

// Rewritten references that can stay plain scalars in block and flow context alike.
const SAFE_PLAIN = /^[a-z0-9][a-zA-Z0-9._\-/:@+]*$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function rewriteManifests(text: string, plan: RewritePlan): RewriteResult {
  if (plan.imagePullSecret !== undefined && !(DNS_SUBDOMAIN.test(plan.imagePullSecret) && plan.imagePullSecret.length <= 253)) {
    throw new UsageError(`Image pull secret name "${plan.imagePullSecret}" is not a valid Kubernetes object name`, {
      hint: 'Use the name of an existing docker-registry Secret: lowercase letters, digits, "-" and ".".',
    });
  }
  const stream = parseManifestStream(text);
  const locations = locateImages(stream, plan.extraPaths);
  const images = locations.map(({ node: _node, ...occurrence }) => occurrence);
  const edits: TextEdit[] = [];
  const rewrites: ImageRewrite[] = [];

  if (plan.registry) {
    for (const location of locations) validateAt(location);
    const rewriteMap = planImageRewrites(
      locations.map((l) => l.image),
      plan.registry,
    );
    const edited = new Set<Scalar>();
    for (const location of locations) {
      const to = rewriteMap.get(location.image);
      if (to === undefined) continue;
      rewrites.push({ from: location.image, to, kind: location.kind, name: location.name, path: location.path });
      // One anchored scalar may be reached through several aliases: edit it once.
      if (edited.has(location.node)) continue;
      edited.add(location.node);
      edits.push(replaceScalar(location.node, to));
    }
  }
  if (plan.imagePullSecret !== undefined) {
    for (const spec of locatePodSpecs(stream)) {
      const edit = addPullSecret(stream, spec, plan.imagePullSecret);
      if (edit) edits.push(edit);
    }
  }
  return { output: applyEdits(text, edits), rewrites, images };
}

/** Invalid references are reported with the object and line they came from. */
function validateAt(location: ImageLocation): void {
  try {
    parseImageReference(location.image);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    throw new InvalidInputError(
      `${error.message} (${location.kind} "${location.name}", ${location.path}, line ${location.line} of the rendered manifests)`,
      { file: location.source, key: location.path, hint: error.hint },
    );
  }
}

function replaceScalar(node: Scalar, value: string): TextEdit {
  const [start, end] = rangeOf(node);
  let text: string;
  switch (node.type) {
    case 'QUOTE_SINGLE':
      text = `'${value.replaceAll("'", "''")}'`;
      break;
    case 'PLAIN':
      text = SAFE_PLAIN.test(value) ? value : JSON.stringify(value);
      break;
    case 'BLOCK_FOLDED':
    case 'BLOCK_LITERAL':
      // A block scalar's range runs through its final line break; keep one.
      text = `${JSON.stringify(value)}\n`;
      break;
    default:
      // JSON strings are valid YAML double-quoted scalars.
      text = JSON.stringify(value);
  }
  return { start, end, text };
}

function addPullSecret(stream: ManifestStream, spec: PodSpecLocation, secret: string): TextEdit | undefined {
  const { text } = stream;
  const doc = stream.docs[spec.document];
  if (!doc) return undefined;
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

function rangeOf(node: Node): [number, number] {
  if (!node.range) throw new InstallerError(ExitCode.internal, 'Internal error: a parsed YAML node without a source range');
  return [node.range[0], node.range[1]];
}

function columnOf(text: string, offset: number): number {
  return offset - (text.lastIndexOf('\n', offset - 1) + 1);
}

function expectChar(text: string, offset: number, char: string, spec: PodSpecLocation): void {
  if (text[offset] !== char) {
    throw new InstallerError(ExitCode.internal, `Internal error: expected "${char}" at line ${spec.line} of ${spec.kind} "${spec.name}"`);
  }
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => a.start - b.start);
  let out = '';
  let cursor = 0;
  for (const edit of sorted) {
    if (edit.start < cursor) throw new InstallerError(ExitCode.internal, 'Internal error: overlapping manifest edits');
    out += text.slice(cursor, edit.start) + edit.text;
    cursor = edit.end;
  }
  return out + text.slice(cursor);
}
