// Finds every image in helm's rendered manifest stream (WHAT is an image and WHERE): the
// containers of every pod template, of built-in and custom kinds alike (hooks are ordinary
// documents here); references embedded in container args, command and env values and in
// ConfigMap and Secret data (data-images.ts; embedded-images.ts decides what a string holds);
// `image` keys of custom resources (custom-resource-images.ts); user-configured paths. Works on
// the `yaml` Document tree of one document at a time (see manifest-stream.ts for how the stream
// is split and parsed) so that the rewriter can edit the exact source ranges of what it finds and
// leave every other byte alone.
import { isMap, isScalar, isSeq, type Document, type Scalar, type YAMLMap } from 'yaml';
import { InvalidInputError, UsageError } from '../common/errors.js';
import {
  findEmbeddedReferences,
  type EmbeddedContext,
  type EmbeddedReference,
  type NamePart,
} from './embedded-images.js';
import { at, get, getScalar, resolve, stringAt, walkSegments, type Segment } from '../rendered/yaml-nodes.js';
import {
  isCustomResourceDefinition,
  parsePiece,
  sourceComment,
  splitManifestStream,
  type ManifestPiece,
  type ParsedPiece,
} from '../rendered/manifest-stream.js';
import { locateInCustomResource } from './custom-resource-images.js';
import { locateInConfigMap, locateInSecret } from './data-images.js';
import type { ObjectContext, ObjectSink } from './object-sink.js';

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
  /** With a release plan: the release whose chart renders it. */
  release?: string;
  /** The `helm.sh/hook` annotation, when the object is a hook. */
  hook?: string;
  /**
   * Set when the reference is part of a longer string (a flag, env value, ConfigMap data line):
   * what names it (`--flag`, `env NAME`, a data key).
   */
  via?: string;
  /** With `via`: the kind of string the reference sits in (a container arg or command, an env value, ConfigMap data). */
  embedded?: EmbeddedContext['where'];
  /** An OCI artifact the app pulls at run time (named in ConfigMap data), not a container image. */
  artifact?: true;
}

export interface ImageLocation extends ImageOccurrence {
  /** The scalar to edit (an alias is resolved to its anchored scalar). */
  node: Scalar;
  /** The reference's character range inside the scalar's value; absent: the whole value. */
  span?: {
    start: number;
    end: number;
    /** Only the name of the image is there, its tag in a key of its own: rewritten without a tag. */
    nameOnly?: true;
    /** Of an image given as registry, repository and tag keys: the part of the local name here. */
    part?: NamePart;
    /** A Secret's `data`: the range is in this decoded text, and the edit is encoded again. */
    decoded?: string;
  };
}

/**
 * A value naming only a registry (or registry/namespace) that an operator builds images from;
 * or, with `unreadable`, a Secret value the finder could not read (not base64, a values file that
 * does not parse): left untouched, reported.
 */
export type RegistryOnlyOccurrence = Omit<ImageOccurrence, 'image'> & { value: string; unreadable?: string };

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
// Where custom kinds (an Argo Rollout, an operator's own workload) keep a pod template.
const CUSTOM_SPEC_PATHS = [
  ['spec', 'template', 'spec'],
  ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
];
// Kinds whose `image` keys are never images to deploy (schemas, secrets).
const NO_IMAGE_KEYS = new Set(['CustomResourceDefinition', 'Secret', 'ConfigMap']);
const HELM4_SOURCE_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';

/**
 * The documents of a whole stream that may hold images, parsed one at a time (only one tree alive
 * at a time).
 */
function* manifestDocuments(text: string, extraPaths: ExtraImagePath[] = []): Generator<ManifestStream> {
  for (const piece of splitManifestStream(text)) if (mayHoldImages(piece, extraPaths)) yield parsePiece(piece);
}

/**
 * False for a CustomResourceDefinition (read from its head, not parsed): a schema deploys nothing
 * and none of the places images are looked for exist in one (its `image` keys are schema, see
 * NO_IMAGE_KEYS), unless an extra image path names the kind. Skipping the parse of CRDs, most of
 * the bytes of public charts, is what keeps the post-renderer's memory near its input's size.
 */
export function mayHoldImages(piece: ManifestPiece, extraPaths: ExtraImagePath[]): boolean {
  return extraPaths.some((e) => e.kind === 'CustomResourceDefinition') || !isCustomResourceDefinition(piece.text);
}

/** Validates an extra path's syntax; a bad one is a configuration mistake. */
function parseExtraImagePath(extra: ExtraImagePath): Segment[] {
  const hint = 'Write it as dot-separated keys with `[]` or `*` for list items, e.g. spec.containers[].image.';
  if (!extra || typeof extra.kind !== 'string' || extra.kind === '' || typeof extra.path !== 'string') {
    throw new UsageError(`Extra image path ${JSON.stringify(extra)} needs a kind and a path`, { hint });
  }
  return extra.path.split('.').map((part) => {
    if (part === '*') return { key: '*', each: true } as const;
    const m = /^([^.[\]*]+)(\[\])?$/.exec(part);
    if (!m || !m[1])
      throw new UsageError(`Extra image path "${extra.path}" (kind ${extra.kind}): bad segment "${part}"`, { hint });
    return { key: m[1], each: m[2] !== undefined };
  });
}

export interface LocatedImages {
  images: ImageLocation[];
  registries: RegistryOnlyOccurrence[];
}

/** Every image location, and every registry-only value, of the stream. */
export function locateAll(stream: ManifestStream, extraPaths: ExtraImagePath[] = []): LocatedImages {
  const extras = extraPaths.map((e) => ({ ...e, segments: parseExtraImagePath(e) }));
  const found: ImageLocation[] = [];
  const registries: RegistryOnlyOccurrence[] = [];
  visitObjects(stream, (obj, ctx) => {
    const at = objectSink(stream, ctx, { found, registries });
    const spec = podSpecOf(obj, ctx);
    if (spec) locateInPodSpec(spec, ctx, at);
    const core = ctx.apiVersion === undefined || ctx.apiVersion === 'v1';
    if (ctx.kind === 'Secret' && core) locateInSecret(obj, ctx, at);
    if (ctx.kind === 'ConfigMap' && core) locateInConfigMap(obj, ctx, at);
    if (!WORKLOADS[ctx.kind] && !NO_IMAGE_KEYS.has(ctx.kind)) locateInCustomResource(obj, ctx, at);
    for (const extra of extras) locateExtraPath(extra, obj, ctx, stream, at);
  });
  return { images: found, registries };
}

function objectSink(
  stream: ManifestStream,
  ctx: ObjectContext,
  sink: { found: ImageLocation[]; registries: RegistryOnlyOccurrence[] },
): ObjectSink {
  // A path reached twice (a custom resource's image key inside its pod template) is one
  // location; one scalar reached by two paths (an alias) is two.
  const seen = new Set<string>();
  const addRegistry = (node: Scalar, path: string, via: string, value: string, unreadable?: string) =>
    sink.registries.push({
      ...occurrenceOf(node, path, ctx, stream),
      via,
      value,
      ...(unreadable !== undefined ? { unreadable } : {}),
    });
  return {
    add: (node, path) => {
      if (seen.has(path)) return;
      seen.add(path);
      addImage(sink.found, node, path, ctx, stream);
    },
    addEmbedded: (node, path, context) => {
      if (seen.has(path) || typeof node.value !== 'string') return;
      const { images, registries: only } = findEmbeddedReferences(node.value, context);
      if (images.length > 0) seen.add(path);
      for (const ref of images) addEmbeddedImage(sink.found, node, path, ref, context.where, ctx, stream);
      for (const ref of only) addRegistry(node, path, ref.via, ref.reference);
    },
    addRegistry,
    addReference: (node, path, ref, where, decoded) =>
      addEmbeddedImage(sink.found, node, path, ref, where, ctx, stream, decoded),
  };
}

/** Each container's image, the references in its command and args, and in its env values. */
function locateInPodSpec(spec: { node: YAMLMap; path: string }, ctx: ObjectContext, at: ObjectSink): void {
  for (const list of CONTAINER_LISTS) {
    const containers = get(spec.node, list, ctx.doc);
    if (!isSeq(containers)) continue;
    containers.items.forEach((item, i) => {
      const container = resolve(item, ctx.doc);
      if (!isMap(container)) return;
      const path = `${spec.path}.${list}[${i}]`;
      const image = getScalar(container, 'image', ctx.doc);
      if (image) at.add(image, `${path}.image`);
      for (const field of ['command', 'args'])
        locateInArgs(get(container, field, ctx.doc), `${path}.${field}`, ctx, at);
      const env = get(container, 'env', ctx.doc);
      if (!isSeq(env)) return;
      env.items.forEach((entry, j) => {
        const variable = resolve(entry, ctx.doc);
        if (!isMap(variable)) return;
        const name = getScalar(variable, 'name', ctx.doc)?.value;
        const value = getScalar(variable, 'value', ctx.doc);
        if (typeof name === 'string' && value) at.addEmbedded(value, `${path}.env[${j}].value`, { where: 'env', name });
      });
    });
  }
}

/** A command or args list: each item read with the one before it (`--image` `repo:tag`). */
function locateInArgs(items: unknown, path: string, ctx: ObjectContext, at: ObjectSink): void {
  if (!isSeq(items)) return;
  let previous: string | undefined;
  items.items.forEach((arg, j) => {
    const node = resolve(arg, ctx.doc);
    if (!isScalar(node)) return;
    at.addEmbedded(node, `${path}[${j}]`, { where: 'arg', ...(previous !== undefined ? { previous } : {}) });
    previous = typeof node.value === 'string' ? node.value : undefined;
  });
}

/** An --image-path of this object's kind: the string it points at, or an error naming the path. */
function locateExtraPath(
  extra: ExtraImagePath & { segments: ReturnType<typeof parseExtraImagePath> },
  obj: YAMLMap,
  ctx: ObjectContext,
  stream: ManifestStream,
  at: ObjectSink,
): void {
  if (extra.kind !== ctx.kind || (extra.apiVersion !== undefined && extra.apiVersion !== ctx.apiVersion)) return;
  walkSegments(obj, extra.segments, ctx.prefix.replace(/\.$/, ''), ctx.doc, (node, path) => {
    const target = resolve(node, ctx.doc);
    if (isScalar(target)) at.add(target, path);
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
  return collectAll(text, extraPaths).images;
}

/** Every image and registry-only value of the stream, one document parsed at a time. */
export function collectAll(
  text: string,
  extraPaths: ExtraImagePath[] = [],
): { images: ImageOccurrence[]; registries: RegistryOnlyOccurrence[] } {
  const images: ImageOccurrence[] = [];
  const registries: RegistryOnlyOccurrence[] = [];
  for (const stream of manifestDocuments(text, extraPaths)) {
    const located = locateAll(stream, extraPaths);
    for (const { node: _node, span: _span, ...occurrence } of located.images) images.push(occurrence);
    registries.push(...located.registries);
  }
  return { images, registries };
}

export function visitObjects(stream: ManifestStream, fn: (obj: YAMLMap, ctx: ObjectContext) => void): void {
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
  const group = ctx.apiVersion?.includes('/') ? ctx.apiVersion.slice(0, ctx.apiVersion.indexOf('/')) : '';
  if (workload && (ctx.apiVersion === undefined || workload.groups.includes(group))) {
    const node = at(obj, workload.specPath, ctx.doc);
    return isMap(node) ? { node, path: ctx.prefix + workload.specPath.join('.') } : undefined;
  }
  // Any other kind (an Argo Rollout, a CRD reusing a built-in name): a pod template is a map
  // with a `containers` list at one of the usual places.
  for (const specPath of CUSTOM_SPEC_PATHS) {
    const node = at(obj, specPath, ctx.doc);
    if (isMap(node) && isSeq(get(node, 'containers', ctx.doc))) return { node, path: ctx.prefix + specPath.join('.') };
  }
  return undefined;
}

function occurrenceOf(
  node: Scalar,
  path: string,
  ctx: ObjectContext,
  stream: ManifestStream,
): Omit<ImageOccurrence, 'image'> {
  return {
    kind: ctx.kind,
    name: ctx.name,
    ...(ctx.namespace !== undefined ? { namespace: ctx.namespace } : {}),
    path,
    document: ctx.document,
    line: lineOf(stream, node),
    ...(ctx.source !== undefined ? { source: ctx.source } : {}),
    ...(ctx.hook !== undefined ? { hook: ctx.hook } : {}),
  };
}

function addEmbeddedImage(
  found: ImageLocation[],
  node: Scalar,
  path: string,
  ref: EmbeddedReference,
  where: EmbeddedContext['where'],
  ctx: ObjectContext,
  stream: ManifestStream,
  decoded?: string,
): void {
  found.push({
    image: ref.reference,
    ...occurrenceOf(node, path, ctx, stream),
    via: ref.via,
    embedded: where,
    ...(ref.artifact ? { artifact: true as const } : {}),
    node,
    span: {
      start: ref.start,
      end: ref.end,
      ...(ref.nameOnly ? { nameOnly: true as const } : {}),
      ...(ref.part ? { part: ref.part } : {}),
      ...(decoded !== undefined ? { decoded } : {}),
    },
  });
}

function addImage(
  found: ImageLocation[],
  node: Scalar,
  path: string,
  ctx: ObjectContext,
  stream: ManifestStream,
): void {
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

/** 1-based line of the node in the whole stream. */
function lineOf(stream: ManifestStream, node: { range?: [number, number, number] | null }): number {
  return node.range ? stream.lineAt(node.range[0]) : 0;
}

/** Helm 3 starts every document with `# Source: <chart>/templates/<file>`. */
function sourceOf(text: string, doc: Document.Parsed): string | undefined {
  return sourceComment(text.slice(doc.range[0]), (doc.contents?.range?.[0] ?? doc.range[1]) - doc.range[0]);
}
