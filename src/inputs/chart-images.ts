// The images a chart declares itself, read with the chart: Chart.yaml's `helm.sh/images`
// annotation (HIP-0015). The image catalog (src/images/image-catalog.ts) adds them to what the render finds.
import { InvalidInputError } from '../common/errors.js';

/** An image a chart declares in its Chart.yaml `helm.sh/images` annotation (HIP-0015). */
export interface AnnotatedImage {
  image: string;
  name?: string;
  /** The chart whose Chart.yaml declares it. */
  chart: string;
}

/**
 * Reads `helm.sh/images` (HIP-0015, the same shape as artifacthub.io/images): a YAML list of
 * `{name, image}` in a Chart.yaml annotation. Bad entries are an error naming the chart.
 */
export function parseImagesAnnotation(
  value: unknown,
  chart: string,
  parse: (text: string) => unknown,
): AnnotatedImage[] {
  if (value === undefined || value === null || value === '') return [];
  const where = {
    key: 'annotations.helm.sh/images',
    hint: 'Write it as a YAML list of {name, image} entries (HIP-0015).',
  };
  let list: unknown;
  try {
    list = typeof value === 'string' ? parse(value) : value;
  } catch (error) {
    throw new InvalidInputError(
      `Chart ${chart}: the helm.sh/images annotation is not YAML: ${(error as Error).message}`,
      where,
    );
  }
  if (!Array.isArray(list))
    throw new InvalidInputError(`Chart ${chart}: the helm.sh/images annotation is not a list`, where);
  return list.map((item, i) => {
    const image = typeof item === 'string' ? item : (item as { image?: unknown } | null)?.image;
    if (typeof image !== 'string' || image === '') {
      throw new InvalidInputError(`Chart ${chart}: helm.sh/images entry ${i + 1} has no image string`, where);
    }
    const name = (item as { name?: unknown }).name;
    return { image, chart, ...(typeof name === 'string' ? { name } : {}) };
  });
}
