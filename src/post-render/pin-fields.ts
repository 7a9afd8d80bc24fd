// Pins: fields of rendered objects set to their live values before helm applies them. Something
// else owns them (an HPA owns a Deployment's /spec/replicas, a webhook adds an annotation, a CA
// injector fills a CRD's caBundle), and a drift ignore rule says so; on an upgrade helm would take
// them back (helm 4 applies with --force-conflicts, helm 3's three-way merge resets them too).
// The orchestrator reads the live values and hands them here; the post-render writes them into
// the matching documents, so at those paths what helm applies is what is live: helm changes
// nothing there.
//
// Only a matched document is touched: it is parsed by the library and printed again with its
// printer (comments kept). Every other document is left to the caller, byte for byte.
import { isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { UsageError } from '../common/errors.js';
import { get, resolve } from '../rendered/yaml-nodes.js';
import { parsePiece, parseWithLibrary, type ManifestPiece, type ParsedPiece } from '../rendered/manifest-stream.js';

/** One field of a pinned object. */
export interface FieldPin {
  /** JSON pointer (RFC 6901: `~1` is `/`, `~0` is `~`) into the object, e.g. `/spec/replicas`. */
  path: string;
  /** The live value, written at `path` (intermediate maps are created; list items must exist). */
  value?: unknown;
  /** The live object has no such field: it is removed. */
  absent?: true;
}

export interface PinnedObject {
  /** When given, only its group must match (the version the chart renders may differ). */
  apiVersion?: string;
  kind: string;
  /** Absent: a cluster-scoped object, matched by kind and name alone. */
  namespace?: string;
  name: string;
  fields: FieldPin[];
}

export interface PinPlan {
  /** A rendered object without metadata.namespace is in this namespace. */
  releaseNamespace: string;
  objects: PinnedObject[];
}

/** The identity of a rendered document, as far as it has one. */
interface Identity {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
}

// Helm 4 names each document's template file in this annotation for its round trip through the
// post-renderer, and reads it back: a pin of the whole annotations map must not drop it.
const HELM4_FILENAME = 'postrenderer.helm.sh/postrender-filename';

/** A pin plan checked once, with what a document needs to be a candidate, cheaply. */
export class PinMatcher {
  readonly plan: PinPlan;
  /** Pointers split into keys, per object. */
  private readonly compiled: { object: PinnedObject; fields: { keys: string[]; pin: FieldPin }[] }[];
  private readonly names: string[];
  readonly pinsCustomResourceDefinitions: boolean;

  constructor(plan: PinPlan) {
    this.plan = plan;
    this.compiled = plan.objects.map((object) => {
      if (
        !object ||
        typeof object.kind !== 'string' ||
        object.kind === '' ||
        typeof object.name !== 'string' ||
        object.name === ''
      ) {
        throw new UsageError(`A pinned object needs a kind and a name: ${JSON.stringify(object)}`);
      }
      return { object, fields: object.fields.map((pin) => ({ keys: parsePointer(pin.path, object), pin })) };
    });
    this.names = [...new Set(plan.objects.map((o) => o.name))];
    this.pinsCustomResourceDefinitions = plan.objects.some((o) => o.kind === 'CustomResourceDefinition');
  }

  /** The pinned objects a document of this identity is (usually none or one). */
  objectsFor(identity: Identity): PinnedObject[] {
    return this.compiled
      .filter(({ object }) => matches(object, identity, this.plan.releaseNamespace))
      .map((c) => c.object);
  }

  /**
   * False when no document of the piece can be a pinned object, told without parsing it: an
   * object's name is a DNS name, written as it is in any YAML style.
   */
  mayMatch(piece: ManifestPiece): boolean {
    return this.names.some((name) => piece.text.includes(name));
  }

  /** Whether any document of the piece is a pinned object. `parsed`: the piece, if parsed already. */
  matches(piece: ManifestPiece, parsed?: ParsedPiece): boolean {
    if (!this.mayMatch(piece)) return false;
    const docs = (parsed ?? parsePiece(piece)).docs;
    return docs.some((doc) => {
      const identity = identityOf(doc);
      return identity !== undefined && this.objectsFor(identity).length > 0;
    });
  }

  /**
   * The piece with every pinned field of its matching documents set (or removed), printed again;
   * undefined when no document of it matches. `fields`: how many pins were applied.
   */
  pin(piece: ManifestPiece): { text: string; documents: number; fields: number } | undefined {
    if (!this.mayMatch(piece)) return undefined;
    // The library's tree, not the fast reader's: it keeps comments, and it is printed.
    const { docs } = parseWithLibrary(piece);
    let documents = 0;
    let fields = 0;
    for (const doc of docs) {
      const identity = identityOf(doc);
      if (!identity) continue;
      const objects = this.compiled.filter(({ object }) => matches(object, identity, this.plan.releaseNamespace));
      if (objects.length === 0) continue;
      documents++;
      const filename = annotation(doc, HELM4_FILENAME);
      for (const { fields: pins } of objects) {
        for (const { keys, pin } of pins) if (applyPin(doc, keys, pin)) fields++;
      }
      if (filename !== undefined && annotation(doc, HELM4_FILENAME) === undefined)
        restoreAnnotation(doc, HELM4_FILENAME, filename);
    }
    if (documents === 0) return undefined;
    // lineWidth 0: no long string is folded onto new lines by the printer.
    return { text: docs.map((doc) => doc.toString({ lineWidth: 0 })).join(''), documents, fields };
  }
}

/** Refuses a plan with a bad pointer or an object without kind or name (UsageError), before helm runs. */
export function checkPinPlan(plan: PinPlan): void {
  void new PinMatcher(plan);
}

/**
 * Pure: the stream with its pinned objects' fields set. Documents that match no pin come out as
 * they came in, byte for byte (the post-render does the same inside its rewrite: rewrite-manifests.ts).
 */
export function pinFields(pieces: ManifestPiece[], plan: PinPlan): string {
  const matcher = new PinMatcher(plan);
  return pieces.map((piece) => matcher.pin(piece)?.text ?? piece.text).join('');
}

/** RFC 6901: `/a~1b/c` -> ['a/b', 'c']. The whole object ("") cannot be pinned. */
export function parsePointer(path: string, object?: Pick<PinnedObject, 'kind' | 'name'>): string[] {
  const where = object ? ` (${object.kind} ${object.name})` : '';
  const hint = 'Write the path as a JSON pointer to a field: /spec/replicas, /metadata/annotations/example.com~1key.';
  if (typeof path !== 'string' || !path.startsWith('/'))
    throw new UsageError(`Pinned path ${JSON.stringify(path)}${where} is not a JSON pointer to a field`, { hint });
  return path
    .slice(1)
    .split('/')
    .map((token) => {
      if (/~(?![01])/.test(token))
        throw new UsageError(`Pinned path ${JSON.stringify(path)}${where}: "~" must be followed by 0 or 1`, { hint });
      return token.replace(/~1/g, '/').replace(/~0/g, '~');
    });
}

function matches(object: PinnedObject, identity: Identity, releaseNamespace: string): boolean {
  if (object.kind !== identity.kind || object.name !== identity.name) return false;
  if (
    object.apiVersion !== undefined &&
    identity.apiVersion !== undefined &&
    groupOf(object.apiVersion) !== groupOf(identity.apiVersion)
  )
    return false;
  if (object.namespace === undefined) return true;
  return object.namespace === (identity.namespace ?? releaseNamespace);
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

function identityOf(doc: Document.Parsed): Identity | undefined {
  const root = doc.contents;
  if (!isMap(root)) return undefined;
  const kind = stringOf(get(root, 'kind', doc));
  const metadata = get(root, 'metadata', doc);
  if (kind === undefined || !isMap(metadata)) return undefined;
  const name = stringOf(get(metadata, 'name', doc));
  if (name === undefined) return undefined;
  const namespace = stringOf(get(metadata, 'namespace', doc));
  const apiVersion = stringOf(get(root, 'apiVersion', doc));
  return {
    kind,
    name,
    ...(namespace !== undefined && namespace !== '' ? { namespace } : {}),
    ...(apiVersion !== undefined ? { apiVersion } : {}),
  };
}

function stringOf(node: Node | undefined): string | undefined {
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

/** The pair of `map` whose key reads as `key` (the last one: go-yaml v2 keeps the last). */
function pairOf(map: YAMLMap, key: string): Pair | undefined {
  return (map.items as Pair[]).findLast(
    (p) => isScalar(p.key) && (p.key.value === key || String(p.key.value) === key || p.key.source === key),
  );
}

/** Sets or removes one field; false when the path cannot be reached (a list item that does not exist, a scalar on the way). */
function applyPin(doc: Document.Parsed, keys: string[], pin: FieldPin): boolean {
  let node: Node | undefined = resolve(doc.contents, doc);
  for (let i = 0; i < keys.length - 1; i++) {
    const key = keys[i]!;
    if (isMap(node)) {
      const pair = pairOf(node, key);
      let child = pair ? resolve(pair.value, doc) : undefined;
      if (child === undefined || (isScalar(child) && child.value === null)) {
        // Nothing to remove below a field that is not there.
        if (pin.absent) return false;
        child = doc.createNode({}) as YAMLMap;
        if (pair) pair.value = child;
        else node.add(doc.createPair(key, child));
      }
      node = child;
    } else if (isSeq(node)) {
      const index = indexOf(key, node.items.length);
      if (index === undefined) return false;
      node = resolve(node.items[index], doc);
    } else {
      return false;
    }
  }
  const last = keys[keys.length - 1]!;
  if (isMap(node)) {
    const pair = pairOf(node, last);
    if (pin.absent) {
      if (!pair) return false;
      node.items.splice(node.items.indexOf(pair), 1);
      return true;
    }
    const value = doc.createNode(pin.value ?? null);
    if (pair) pair.value = keepComments(pair.value, value);
    else node.add(doc.createPair(last, value));
    return true;
  }
  if (isSeq(node)) {
    const index = indexOf(last, node.items.length);
    if (index === undefined) return false;
    if (pin.absent) node.items.splice(index, 1);
    else node.items[index] = keepComments(node.items[index], doc.createNode(pin.value ?? null));
    return true;
  }
  return false;
}

/** The new value node, with the comments the old one carried (a `# why` after `replicas: 1`). */
function keepComments(old: unknown, value: Node): Node {
  if (old && typeof old === 'object') {
    const { comment, commentBefore, spaceBefore } = old as Pick<Node, 'comment' | 'commentBefore' | 'spaceBefore'>;
    if (comment) value.comment = comment;
    if (commentBefore) value.commentBefore = commentBefore;
    if (spaceBefore) value.spaceBefore = spaceBefore;
  }
  return value;
}

/** A JSON pointer's list index, only of an item that exists. */
function indexOf(token: string, length: number): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const index = Number(token);
  return index < length ? index : undefined;
}

function annotation(doc: Document.Parsed, key: string): string | undefined {
  const root = doc.contents;
  const metadata = isMap(root) ? get(root, 'metadata', doc) : undefined;
  const annotations = isMap(metadata) ? get(metadata, 'annotations', doc) : undefined;
  return isMap(annotations) ? stringOf(get(annotations, key, doc)) : undefined;
}

function restoreAnnotation(doc: Document.Parsed, key: string, value: string): void {
  applyPin(doc, ['metadata', 'annotations', key], { path: '', value });
}
