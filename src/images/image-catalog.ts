// The one image catalog of a run: every image the rendered chart deploys, where each came from, and
// the name it has in the local registry. `images`, `render`, the install preflight and the
// post-renderer all build it with this function from the same inputs (rendered manifests, the
// registry, the extra paths, the chart's `helm.sh/images` annotation), so they cannot disagree on
// what is an image, what it is called locally, or what collides.
import { InvalidInputError } from '../common/errors.js';
import type { AnnotatedImage } from '../inputs/chart-images.js';
import {
  isKotsLocalName,
  namesTagOrDigest,
  parseImageReference,
  planImageRewrites,
  rewriteImageReference,
  withoutTag,
  type LocalRegistry,
} from '../common/image-reference.js';
import type { ImageOccurrence, RegistryOnlyOccurrence } from './manifest-images.js';

// Read with the chart (src/inputs/chart-images.ts); named here too, where the image catalog uses them.

export interface CatalogImage {
  /** Normalised source reference (`docker.io/library/nginx:latest`). */
  source: string;
  /** Every spelling the chart used for it. */
  spellings: string[];
  /** Its exact KOTS name in the local registry; absent without a registry. */
  target?: string;
  /** Already in the local registry under its exact KOTS name. */
  local: boolean;
  occurrences: ImageOccurrence[];
  annotations: AnnotatedImage[];
  /** Every place names it as an OCI artifact the app pulls at run time (ConfigMap data). */
  artifact?: true;
  /**
   * Set when this reference only names an image the chart deploys under another reference
   * (`image`, as listed): not an image of its own, so not listed, pushed or checked.
   * - `collision`: found only in container flags or env values (a telemetry label holding
   *   `<org>/<name>:<version>`), it would share its KOTS name with `image`, which a container
   *   runs: that image is kept, this reference is left as written (no `target`), and the plan
   *   warns.
   * - `untagged`: written without a tag inside a longer string (a chart's values kept in a
   *   ConfigMap, the tag in another key), for a repository the chart deploys with a tag or
   *   digest: rewritten to its local name, without a tag (`target`).
   */
  nameOf?: { image: string; reason: 'collision' | 'untagged' };
}

export interface ImageCatalog {
  registry?: LocalRegistry;
  /** Sorted by source; names of other images (`nameOf`) included. */
  images: CatalogImage[];
  /** Values naming only a registry that operators build image names from (report only). */
  registries: RegistryOnlyOccurrence[];
  /** One line per place of a `collision` name: what was kept, what is left as written. */
  warnings: string[];
}

export interface ImageCatalogInput {
  occurrences: ImageOccurrence[];
  registries?: RegistryOnlyOccurrence[];
  annotated?: AnnotatedImage[];
  registry?: LocalRegistry;
}

export function buildImageCatalog(input: ImageCatalogInput): ImageCatalog {
  const byImage = new Map<string, CatalogImage>();
  const entry = (spelling: string, where: () => string, file?: string, key?: string): CatalogImage => {
    let source: string;
    try {
      source = parseImageReference(spelling).normalized;
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new InvalidInputError(`${error.message} (${where()})`, { file, key, hint: error.hint });
    }
    let planned = byImage.get(source);
    if (!planned) {
      planned = { source, spellings: [], local: false, occurrences: [], annotations: [] };
      byImage.set(source, planned);
    }
    if (!planned.spellings.includes(spelling)) planned.spellings.push(spelling);
    return planned;
  };
  for (const o of input.occurrences) {
    const where = () =>
      `document ${o.document + 1}: ${o.kind} "${o.name}", ${o.path}${o.via ? ` (${o.via})` : ''}, line ${o.line} of the rendered manifests`;
    entry(o.image, where, o.source, o.path).occurrences.push(o);
  }
  for (const a of input.annotated ?? []) {
    entry(
      a.image,
      () => `helm.sh/images annotation of chart ${a.chart}`,
      undefined,
      'annotations.helm.sh/images',
    ).annotations.push(a);
  }

  const images = [...byImage.values()].sort((a, b) => a.source.localeCompare(b.source));
  for (const image of images) {
    if (image.annotations.length === 0 && image.occurrences.every((o) => o.artifact)) image.artifact = true;
  }
  const registry = input.registry;
  markUntaggedNames(images);
  // KOTS names collide on the last path component and the tag, whatever the registry: names are
  // told apart the same way with or without one, so `images` lists the same images either way.
  markCollisionNames(images, registry ?? ANY_REGISTRY);
  if (registry) {
    // Refuses two sources on one local name, naming both.
    planImageRewrites(
      images.filter((i) => !i.nameOf).flatMap((i) => i.spellings),
      registry,
    );
    for (const image of images) {
      if (image.nameOf?.reason === 'collision') continue; // left as written
      const ref = parseImageReference(image.spellings[0]!);
      image.local = isKotsLocalName(ref, registry);
      image.target = image.local ? ref.normalized : rewriteImageReference(ref, registry);
      if (image.nameOf) image.target = withoutTag(image.target);
    }
  }
  const registries = (input.registries ?? []).filter((r) => !registry || !isLocalRegistryValue(r.value, registry));
  return { ...(registry ? { registry } : {}), images, registries, warnings: nameWarnings(images, registry) };
}

const ANY_REGISTRY: LocalRegistry = { host: 'local-registry.invalid', address: 'local-registry.invalid' };

/** Placed where a container runs it: an image field, not a string it is part of. */
const runsInContainer = (image: CatalogImage) => image.occurrences.some((o) => o.embedded === undefined);
const onlyInFlagsOrEnv = (image: CatalogImage) =>
  image.annotations.length === 0 &&
  image.occurrences.length > 0 &&
  image.occurrences.every((o) => o.embedded === 'arg' || o.embedded === 'env');

/**
 * An untagged reference inside longer strings only, for a repository the chart deploys with a
 * tag or digest (in a manifest, not only in an annotation): the name of that image, whose tag
 * the app reads elsewhere. Listing it as `:latest` would put an image in the airgap bundle that
 * nothing pulls, and maybe one that does not exist.
 */
function markUntaggedNames(images: CatalogImage[]): void {
  for (const image of images) {
    if (
      image.annotations.length > 0 ||
      image.occurrences.some((o) => o.embedded === undefined) ||
      image.spellings.some(namesTagOrDigest)
    )
      continue;
    const repository = sourceRepository(image);
    const named = images.find(
      (other) =>
        other !== image &&
        other.occurrences.length > 0 &&
        other.spellings.some(namesTagOrDigest) &&
        sourceRepository(other) === repository,
    );
    if (named) image.nameOf = { image: named.spellings[0]!, reason: 'untagged' };
  }
}

/**
 * Two sources on one KOTS name, where exactly one source is what a container runs and every
 * other is found only in container flags or env values: those only name the image (a label
 * naming it as published elsewhere). Anything else (two images that run, a ConfigMap reference)
 * is left to planImageRewrites, which refuses it.
 */
function markCollisionNames(images: CatalogImage[], registry: LocalRegistry): void {
  const byName = new Map<string, CatalogImage[]>();
  for (const image of images) {
    if (image.nameOf) continue;
    const ref = parseImageReference(image.spellings[0]!);
    if (isKotsLocalName(ref, registry)) continue;
    const target = parseImageReference(rewriteImageReference(ref, registry));
    if (target.tag === undefined) continue; // digest-only: content-addressed, nothing contested
    const key = `${target.repository}:${target.tag}`;
    const group = byName.get(key);
    if (group) group.push(image);
    else byName.set(key, [image]);
  }
  for (const group of byName.values()) {
    if (new Set(group.map(sourceRepository)).size < 2) continue;
    const running = group.filter(runsInContainer);
    const named = group.filter(onlyInFlagsOrEnv);
    if (running.length + named.length !== group.length || new Set(running.map(sourceRepository)).size !== 1) continue;
    for (const image of named) image.nameOf = { image: running[0]!.spellings[0]!, reason: 'collision' };
  }
}

function sourceRepository(image: CatalogImage): string {
  const ref = parseImageReference(image.spellings[0]!);
  return `${ref.registry}/${ref.repository}`;
}

function nameWarnings(images: CatalogImage[], registry: LocalRegistry | undefined): string[] {
  const lines = new Set<string>();
  for (const image of images) {
    if (image.nameOf?.reason !== 'collision') continue;
    const local = registry
      ? rewriteImageReference(image.spellings[0]!, registry)
      : `<local registry>/${rewriteImageReference(image.spellings[0]!, ANY_REGISTRY).slice(ANY_REGISTRY.address.length + 1)}`;
    for (const o of image.occurrences) {
      lines.add(
        `image name only: ${o.image} (${describeOccurrence(o)}) names ${image.nameOf.image}, which a container runs, under the same local name ` +
          `(${local}): that image is kept; this reference is left as written and not listed`,
      );
    }
  }
  return [...lines];
}

/** The KOTS name of one reference under the plan's registry; undefined when it stays as it is. */
export function targetOf(plan: ImageCatalog, reference: string): string | undefined {
  if (!plan.registry) return undefined;
  const ref = parseImageReference(reference);
  if (plan.images.some((i) => i.nameOf?.reason === 'collision' && i.source === ref.normalized)) return undefined;
  return isKotsLocalName(ref, plan.registry) ? undefined : rewriteImageReference(ref, plan.registry);
}

/** The names the local registry must hold (sorted, unique): every image, artifacts included, no name of another. */
export function requiredLocalImages(plan: ImageCatalog): string[] {
  return [...new Set(plan.images.filter((i) => !i.nameOf).map((i) => i.target ?? i.source))].sort();
}

/** Every image as the chart spells it (its first spelling), sorted: what an Application must list. */
export function sourceImages(plan: ImageCatalog): string[] {
  return plan.images
    .filter((i) => !i.nameOf)
    .map((i) => i.spellings[0]!)
    .sort();
}

export interface ListedImage {
  reference: string;
  /** Only OCI artifacts (ConfigMap data) go by this name, no container image. */
  artifact: boolean;
}

/** What `images` lists: each image as the chart spells it or, with a registry, its local name. */
export function listedImages(plan: ImageCatalog): ListedImage[] {
  const listed = new Map<string, boolean>();
  for (const image of plan.images) {
    if (image.nameOf) continue;
    const reference = plan.registry ? (image.target ?? image.source) : image.spellings[0]!;
    listed.set(reference, (listed.get(reference) ?? true) && image.artifact === true);
  }
  return [...listed]
    .map(([reference, artifact]) => ({ reference, artifact }))
    .sort((a, b) => (a.reference < b.reference ? -1 : a.reference > b.reference ? 1 : 0));
}

/** Every place a reference (as written, normalised, or its local name) came from. */
export function whyImage(plan: ImageCatalog, reference: string): string[] {
  let normalized: string | undefined;
  try {
    normalized = parseImageReference(reference).normalized;
  } catch {
    normalized = undefined;
  }
  const matches = plan.images.filter(
    (i) =>
      i.source === normalized ||
      i.spellings.includes(reference) ||
      i.target === reference ||
      (normalized !== undefined && i.target === normalized),
  );
  return matches.flatMap((i) => [
    ...i.occurrences.map((o) => `${i.spellings.length > 1 ? `${o.image}: ` : ''}${describeOccurrence(o)}`),
    ...i.annotations.map((a) => `helm.sh/images annotation of chart ${a.chart}${a.name ? ` (${a.name})` : ''}`),
  ]);
}

export function describeOccurrence(
  o: Pick<ImageOccurrence, 'kind' | 'name' | 'path' | 'line' | 'source' | 'hook' | 'via' | 'release'>,
): string {
  const parts = [...(o.release ? [`release ${o.release}`] : []), `${o.kind} ${o.name}`, o.path];
  if (o.via) parts.push(`via ${o.via}`);
  if (o.hook) parts.push(`hook ${o.hook}`);
  if (o.source) parts.push(`from ${o.source}`);
  if (o.line) parts.push(`line ${o.line} of the rendered manifests`);
  return parts.join(', ');
}

/** What a warning of describeRegistryOnly is about, its first words. */
export function registryWarningLabel(r: RegistryOnlyOccurrence): string {
  if (r.unreadable !== undefined) return 'secret value not read';
  return r.value === '' ? 'registry left empty' : 'registry-only reference';
}

/** A warning line per registry-only value: where it is and what would fix it. */
export function describeRegistryOnly(r: RegistryOnlyOccurrence, registry?: LocalRegistry): string {
  const target = registry ? registry.address : '<local registry>';
  if (r.unreadable !== undefined) {
    // A Secret value the finder could not read (secret-data.ts): never its content, only where.
    return `${r.kind} ${r.name}, ${r.path}${r.source ? `, from ${r.source}` : ''}: ${r.unreadable}; left untouched, and no image in it is listed or rewritten`;
  }
  if (r.value === '') {
    // An env var (or an env-style ConfigMap key) naming the registry the workload pulls from, set to "" (embedded-images.ts).
    return (
      `${r.kind} ${r.name}, ${r.path} (${r.via}) is empty${r.source ? `, from ${r.source}` : ''}: ` +
      `the workload pulls images from its default registry (Docker Hub) at run time, which an airgapped cluster cannot reach; ` +
      `set the chart value that renders it to ${target} and list those images in additionalImages`
    );
  }
  return (
    `${r.kind} ${r.name}, ${r.path} (${r.via}) = ${r.value}${r.source ? `, from ${r.source}` : ''}: ` +
    `the workload builds image names from this registry at run time; set the chart value that renders it to ${target} ` +
    `and list those images in additionalImages`
  );
}

function isLocalRegistryValue(value: string, registry: LocalRegistry): boolean {
  const v = value.replace(/\/+$/, '').toLowerCase();
  return v === registry.address || v === registry.host;
}
