// `images --format json`: what is known about each listed image, for tools (a bundle builder, a
// copy script, a dashboard) that want more than the plain list without parsing comments. One
// entry per line of `--format list`, in the same order: the reference listed, the chart's
// spelling, its local name (with a registry), whether only an OCI artifact goes by it, every
// place it comes from, and the releases that need it (with a release plan).
import { describeOccurrence, listedImages, type ImageCatalog, type CatalogImage } from './image-catalog.js';

const IMAGES_JSON_SCHEMA_VERSION = 1;

interface ImagesJsonEntry {
  /** The line `--format list` prints: the local name with a registry, else the chart's spelling. */
  reference: string;
  /** Normalised source reference(s) listed under it (two spellings of one image are one). */
  sources: string[];
  /** Its name in the local registry (with `--registry` only). */
  target?: string;
  /** Only OCI artifacts the app pulls at run time go by this name: no container runs it. */
  artifact: boolean;
  /** Every place it comes from, as `--why` prints them. */
  places: string[];
  /** With a release plan: the releases whose charts render it, sorted. */
  releases: string[];
}

export interface ImagesJson {
  schemaVersion: number;
  registry?: string;
  images: ImagesJsonEntry[];
}

/** Pure: the JSON document for a plan (callers print it with a final newline). */
export function imagesJson(plan: ImageCatalog): ImagesJson {
  const byReference = new Map<string, CatalogImage[]>();
  for (const image of plan.images) {
    if (image.nameOf) continue;
    const reference = plan.registry ? (image.target ?? image.source) : image.spellings[0]!;
    byReference.set(reference, [...(byReference.get(reference) ?? []), image]);
  }
  const images = listedImages(plan).map(({ reference, artifact }): ImagesJsonEntry => {
    const group = byReference.get(reference) ?? [];
    const target = group.find((i) => i.target !== undefined)?.target;
    return {
      reference,
      sources: [...new Set(group.map((i) => i.source))].sort(),
      ...(target !== undefined ? { target } : {}),
      artifact,
      places: group.flatMap((i) => [
        ...i.occurrences.map((o) => describeOccurrence(o)),
        ...i.annotations.map((a) => `helm.sh/images annotation of chart ${a.chart}${a.name ? ` (${a.name})` : ''}`),
      ]),
      releases: [...new Set(group.flatMap((i) => i.occurrences.flatMap((o) => (o.release ? [o.release] : []))))].sort(),
    };
  });
  return {
    schemaVersion: IMAGES_JSON_SCHEMA_VERSION,
    ...(plan.registry ? { registry: plan.registry.address } : {}),
    images,
  };
}
