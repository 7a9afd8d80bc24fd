// Finds every image in helm's rendered manifest stream: the containers of every pod template of
// the built-in workload kinds (hooks are ordinary documents here), plus user-configured paths for
// custom resources. Works on the `yaml` Document tree of one document at a time (see
// manifest-stream.ts for how the stream is split and parsed) so that the rewriter can edit the
// exact source ranges of what it finds and leave every other byte alone.
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';
import { InvalidInputError, UsageError } from '../errors.js';
import { parsePiece, sourceComment, splitManifestStream, type ParsedPiece } from './manifest-stream.js';

/**
 * An extra place that holds an image, for custom resources. `path` is dot-separated keys from
 * the object's root; `key[]` (or a `*` segment) means every item of a list (`*` also means every
 * value of a map). Keys containing `.`, `[`, `]` or `*` cannot be addressed.
 * Example: `{ kind: 'Workflow', apiVersion: 'argoproj.io/v1alpha1', path: 'spec.templates[].container.image' }`.
 */
export interface ExtraImagePath {
  kind: string;
  /** Exact `group/version` to match; any apiVersion when absent. */
  apiVersion?: string;
  path: string;
}

export interface ImageOccurrence {
  image: string;
  kind: string;
  name: string;
  namespace?: string;
  /** Where in the object, e.g. `spec.template.spec.containers[0].image` (`items[2].…` in a List). */
  path: string;
  /** 0-based index of the document in the stream (of its `---` piece, see manifest-stream.ts). */
  document: number;
  /**
   * 1-based line of the image in the stream helm handed over (not a line of the template: helm
   * renders, and helm 4 re-serialises, before the post-renderer sees it).
   */
  line: number;
  /** The template helm rendered it from (its `# Source:` comment). */
  source?: string;
  /** The `helm.sh/hook` annotation, when the object is a hook. */
  hook?: string;
}

export interface ImageLocation extends ImageOccurrence {
  /** The scalar to edit (an alias is resolved to its anchored scalar). */
  node: Scalar;
}

export interface PodSpecLocation {
  node: YAMLMap;
  doc: Document.Parsed;
  kind: string;
  name: string;
  path: string;
  document: number;
  line: number;
  source?: string;
}

/** One document of the stream, parsed: node ranges index into `text`. */
export type ManifestStream = ParsedPiece;

export type Segment = { key: string; each: boolean } | { key: '*'; each: true };

// Where the pod spec sits, per built-in kind, and the API groups that own the kind ('' = core).
const WORKLOADS: Record<string, { groups: string[]; specPath: string[] }> = {
  Pod: { groups: [''], specPath: ['spec'] },
  PodTemplate: { groups: [''], specPath: ['template', 'spec'] },
  ReplicationController: { groups: [''], specPath: ['spec', 'template', 'spec'] },
  Deployment: { groups: ['apps', 'extensions'], specPath: ['spec', 'template', 'spec'] },
  StatefulSet: { groups: ['apps'], specPath: ['spec', 'template', 'spec'] },
  DaemonSet: { groups: ['apps', 'extensions'], specPath: ['spec', 'template', 'spec'] },
  ReplicaSet: { groups: ['apps', 'extensions'], specPath: ['spec', 'template', 'spec'] },
  Job: { groups: ['batch'], specPath: ['spec', 'template', 'spec'] },
  CronJob: { groups: ['batch'], specPath: ['spec', 'jobTemplate', 'spec', 'template', 'spec'] },
};
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];
const HELM4_SOURCE_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';

/** The documents of a whole stream, parsed one at a time (only one tree alive at a time). */
export function* manifestDocuments(text: string): Generator<ManifestStream> {
  for (const piece of splitManifestStream(text)) yield parsePiece(piece);
}

/** Validates an extra path's syntax; a bad one is a configuration mistake. */
export function parseExtraImagePath(extra: ExtraImagePath): Segment[] {
  const hint = 'Write it as dot-separated keys with `[]` or `*` for list items, e.g. spec.containers[].image.';
  if (!extra || typeof extra.kind !== 'string' || extra.kind === '' || typeof extra.path !== 'string') {
    throw new UsageError(`Extra image path ${JSON.stringify(extra)} needs a kind and a path`, { hint });
  }
  return extra.path.split('.').map((part) => {
    if (part === '*') return { key: '*', each: true } as const;
    const m = /^([^.[\]*]+)(\[\])?$/.exec(part);
    if (!m || !m[1]) throw new UsageError(`Extra image path "${extra.path}" (kind ${extra.kind}): bad segment "${part}"`, { hint });
    return { key: m[1], each: m[2] !== undefined };
  });
}

export function locateImages(stream: ManifestStream, extraPaths: ExtraImagePath[] = []): ImageLocation[] {
  const extras = extraPaths.map((e) => ({ ...e, segments: parseExtraImagePath(e) }));
  const found: ImageLocation[] = [];
  visitObjects(stream, (obj, ctx) => {
    const spec = podSpecOf(obj, ctx);
    if (spec) {
      for (const list of CONTAINER_LISTS) {
        const containers = get(spec.node, list, ctx.doc);
        if (!isSeq(containers)) continue;
        containers.items.forEach((item, i) => {
          const container = resolve(item, ctx.doc);
          if (!isMap(container)) return;
          const image = getScalar(container, 'image', ctx.doc);
          if (image) addImage(found, image, `${spec.path}.${list}[${i}].image`, ctx, stream);
        });
      }
    }
    for (const extra of extras) {
      if (extra.kind !== ctx.kind || (extra.apiVersion !== undefined && extra.apiVersion !== ctx.apiVersion)) continue;
      walkSegments(obj, extra.segments, ctx.prefix.replace(/\.$/, ''), ctx.doc, (node, path) => {
        const target = resolve(node, ctx.doc);
        if (isScalar(target)) addImage(found, target, path, ctx, stream);
        else if (target !== null && target !== undefined) {
          const what = isMap(target) ? 'map' : 'list';
          throw new InvalidInputError(
            `Extra image path "${extra.path}" in ${ctx.kind} "${ctx.name}" points at a ${what}, not an image string ` +
              `(${path}, line ${lineOf(stream, target)} of the rendered manifests)`,
            { file: ctx.source, key: path, hint: 'Point the path at the string that holds the image.' },
          );
        }
      });
    }
  });
  return found;
}

export function locatePodSpecs(stream: ManifestStream): PodSpecLocation[] {
  const found: PodSpecLocation[] = [];
  const seen = new Set<YAMLMap>();
  visitObjects(stream, (obj, ctx) => {
    const spec = podSpecOf(obj, ctx);
    if (!spec || seen.has(spec.node)) return; // an anchored spec shared by two objects: once
    seen.add(spec.node);
    found.push({
      node: spec.node,
      doc: ctx.doc,
      kind: ctx.kind,
      name: ctx.name,
      path: spec.path,
      document: ctx.document,
      line: lineOf(stream, spec.node),
      source: ctx.source,
    });
  });
  return found;
}

/** Every image in the rendered stream, in document order, without the tree nodes. */
export function collectImages(text: string, extraPaths: ExtraImagePath[] = []): ImageOccurrence[] {
  const found: ImageOccurrence[] = [];
  for (const stream of manifestDocuments(text)) {
    for (const { node: _node, ...occurrence } of locateImages(stream, extraPaths)) found.push(occurrence);
  }
  return found;
}

interface ObjectContext {
  doc: Document.Parsed;
  document: number;
  kind: string;
  apiVersion?: string;
  name: string;
  namespace?: string;
  hook?: string;
  source?: string;
  /** Path prefix of this object inside its document (`items[2].` in a List). */
  prefix: string;
}

function visitObjects(stream: ManifestStream, fn: (obj: YAMLMap, ctx: ObjectContext) => void): void {
  const document = stream.index;
  stream.docs.forEach((doc) => {
    const source = sourceOf(stream.text, doc);
    const visit = (node: unknown, prefix: string): void => {
      const obj = resolve(node, doc);
      if (!isMap(obj)) return;
      const kind = stringAt(obj, ['kind'], doc) ?? '';
      const items = get(obj, 'items', doc);
      // `kind: List` (and typed lists like `ConfigMapList`) wrap whole objects.
      if (kind.endsWith('List') && isSeq(items)) {
        items.items.forEach((item, i) => visit(item, `${prefix}items[${i}].`));
        return;
      }
      fn(obj, {
        doc,
        document,
        kind,
        apiVersion: stringAt(obj, ['apiVersion'], doc),
        name: stringAt(obj, ['metadata', 'name'], doc) ?? '',
        namespace: stringAt(obj, ['metadata', 'namespace'], doc),
        hook: stringAt(obj, ['metadata', 'annotations', 'helm.sh/hook'], doc),
        // Helm 4 drops the `# Source:` comments before post-rendering and annotates instead.
        source: stringAt(obj, ['metadata', 'annotations', HELM4_SOURCE_ANNOTATION], doc) ?? source,
        prefix,
      });
    };
    visit(doc.contents, '');
  });
}

function podSpecOf(obj: YAMLMap, ctx: ObjectContext): { node: YAMLMap; path: string } | undefined {
  const workload = WORKLOADS[ctx.kind];
  if (!workload) return undefined;
  if (ctx.apiVersion !== undefined) {
    const group = ctx.apiVersion.includes('/') ? ctx.apiVersion.slice(0, ctx.apiVersion.indexOf('/')) : '';
    if (!workload.groups.includes(group)) return undefined; // a CRD that reuses a built-in kind name
  }
  let node: unknown = obj;
  for (const key of workload.specPath) {
    node = isMap(node) ? get(node, key, ctx.doc) : undefined;
  }
  return isMap(node) ? { node, path: ctx.prefix + workload.specPath.join('.') } : undefined;
}

function addImage(found: ImageLocation[], node: Scalar, path: string, ctx: ObjectContext, stream: ManifestStream): void {
  const line = lineOf(stream, node);
  if (node.value === null || node.value === '') return; // no image set: nothing to rewrite
  if (typeof node.value !== 'string') {
    throw new InvalidInputError(
      `The image at ${path} in ${ctx.kind} "${ctx.name}" is ${JSON.stringify(node.value)}, not a string ` +
        `(line ${line} of the rendered manifests)`,
      { file: ctx.source, key: path, hint: 'Quote the image in the template or values.' },
    );
  }
  found.push({
    image: node.value,
    kind: ctx.kind,
    name: ctx.name,
    ...(ctx.namespace !== undefined ? { namespace: ctx.namespace } : {}),
    path,
    document: ctx.document,
    line,
    ...(ctx.source !== undefined ? { source: ctx.source } : {}),
    ...(ctx.hook !== undefined ? { hook: ctx.hook } : {}),
    node,
  });
}

function walkSegments(
  node: unknown,
  segments: Segment[],
  path: string,
  doc: Document.Parsed,
  fn: (node: unknown, path: string) => void,
): void {
  const [segment, ...rest] = segments;
  const current = resolve(node, doc);
  if (!segment) {
    fn(node, path);
    return;
  }
  const join = (key: string) => (path ? `${path}.${key}` : key);
  if (segment.key === '*') {
    if (isSeq(current)) current.items.forEach((item, i) => walkSegments(item, rest, `${path}[${i}]`, doc, fn));
    else if (isMap(current)) {
      for (const pair of current.items) {
        if (isScalar(pair.key) && typeof pair.key.value === 'string') walkSegments(pair.value, rest, join(pair.key.value), doc, fn);
      }
    }
    return;
  }
  if (!isMap(current)) return;
  const child = get(current, segment.key, doc);
  if (child === undefined) return;
  if (!segment.each) {
    walkSegments(child, rest, join(segment.key), doc, fn);
    return;
  }
  if (isSeq(child)) child.items.forEach((item, i) => walkSegments(item, rest, `${join(segment.key)}[${i}]`, doc, fn));
}

export function resolve(node: unknown, doc: Document.Parsed): Node | undefined {
  if (isAlias(node)) return (node.resolve(doc) as Node | undefined) ?? undefined;
  return (node ?? undefined) as Node | undefined;
}

/**
 * A map lookup that follows aliases and `<<` merge keys: explicit keys win over merged ones, and
 * of a repeated key the last one counts (go-yaml v2's behaviour).
 */
export function get(map: YAMLMap, key: string, doc: Document.Parsed): Node | undefined {
  const merges: unknown[] = [];
  let explicit: { value: unknown } | undefined;
  for (const pair of map.items) {
    if (!isScalar(pair.key)) continue;
    if (pair.key.value === key) explicit = { value: pair.value };
    else if (pair.key.source === '<<' && typeof pair.key.value === 'symbol') merges.push(pair.value);
  }
  if (explicit) return resolve(explicit.value, doc);
  for (const merge of merges) {
    const target = resolve(merge, doc);
    const sources = isSeq(target) ? target.items.map((item) => resolve(item, doc)) : [target];
    for (const source of sources) {
      if (!isMap(source)) continue;
      const found = get(source, key, doc);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function getScalar(map: YAMLMap, key: string, doc: Document.Parsed): Scalar | undefined {
  const node = get(map, key, doc);
  return isScalar(node) ? node : undefined;
}

function stringAt(map: YAMLMap, keys: string[], doc: Document.Parsed): string | undefined {
  let node: unknown = map;
  for (const key of keys) node = isMap(node) ? get(node, key, doc) : undefined;
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

/** 1-based line of the node in the whole stream. */
export function lineOf(stream: ManifestStream, node: { range?: [number, number, number] | null }): number {
  return node.range ? stream.lineAt(node.range[0]) : 0;
}

/** Helm 3 starts every document with `# Source: <chart>/templates/<file>`. */
function sourceOf(text: string, doc: Document.Parsed): string | undefined {
  return sourceComment(text.slice(doc.range[0]), (doc.contents?.range?.[0] ?? doc.range[1]) - doc.range[0]);
}
