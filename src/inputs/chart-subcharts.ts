// A chart with its subcharts (charts/<dir> and charts/*.tgz, at any depth) as read from disk or
// from an archive, and what the airgap stage needs of the whole tree: the default values as helm
// coalesces them (a subchart's values.yaml under its name or alias, the parent's values winning)
// so that registry hints see image settings that exist only in a subchart; and every chart's
// `helm.sh/images` annotation. Pure: chart.ts does the reading.
import { parse } from 'yaml';
import { InvalidInputError } from '../common/errors.js';
import { parseImagesAnnotation, type AnnotatedImage } from './chart-images.js';

export interface LoadedChart {
  /** Where its Chart.yaml was read, for messages (`chart.tgz:charts/redis-1.0.0.tgz:Chart.yaml`). */
  chartFile: string;
  meta: Record<string, unknown>;
  /** Its own values.yaml. */
  values: Record<string, unknown>;
  subcharts: LoadedChart[];
  /**
   * The dependency files beside Chart.yaml, parsed, when the chart has them: Chart.lock (the
   * versions `helm dependency build` pinned), and an old chart's requirements.yaml and
   * requirements.lock, which helm still reads in their place (chart-dependencies.ts).
   */
  dependencyFiles?: DependencyFiles;
}

/** The files beside Chart.yaml that say which subcharts it needs, in the order helm reads them. */
export const DEPENDENCY_FILES = ['Chart.lock', 'requirements.yaml', 'requirements.lock'] as const;
export type DependencyFiles = Partial<
  Record<(typeof DEPENDENCY_FILES)[number], { file: string; data: Record<string, unknown> }>
>;

/**
 * The chart's defaults with every subchart's under the key helm gives it: the `alias` of each
 * dependency entry naming it (one subchart may be aliased several times), else its name. Maps
 * merge, and a value the parent sets wins over the subchart's default, as in helm's coalescing.
 * A dependency disabled by a condition still contributes: a hint for it is unused, and every hint
 * set is checked against a real render anyway.
 */
export function coalescedDefaults(chart: LoadedChart): Record<string, unknown> {
  const out = structuredClone(chart.values);
  const dependencies = Array.isArray(chart.meta.dependencies) ? (chart.meta.dependencies as unknown[]) : [];
  for (const sub of chart.subcharts) {
    const name = sub.meta.name;
    if (typeof name !== 'string') continue;
    const keys = dependencies
      .filter((d): d is Record<string, unknown> => isMap(d) && d.name === name)
      .map((d) => (typeof d.alias === 'string' && d.alias !== '' ? d.alias : name));
    const defaults = coalescedDefaults(sub);
    for (const key of keys.length > 0 ? [...new Set(keys)] : [name]) out[key] = mergeUnder(out[key], defaults);
  }
  return out;
}

/** `helm.sh/images` of the chart and of every subchart, unpacked or archived, parent first. */
export function annotatedImagesOfTree(chart: LoadedChart): AnnotatedImage[] {
  return [annotatedImagesOf(chart.meta, chart.chartFile), ...chart.subcharts.map(annotatedImagesOfTree)].flat();
}

function annotatedImagesOf(meta: Record<string, unknown>, file: string): AnnotatedImage[] {
  const annotations = meta.annotations as Record<string, unknown> | undefined;
  const name = typeof meta.name === 'string' ? meta.name : file;
  try {
    return parseImagesAnnotation(annotations?.['helm.sh/images'], name, (text) => parse(text, { version: '1.1' }));
  } catch (error) {
    if (error instanceof InvalidInputError)
      throw new InvalidInputError(error.message, { file, key: error.key, hint: error.hint });
    throw error;
  }
}

/** `over` merged onto `under`: maps recursively, anything else from `over` when it is set. */
function mergeUnder(over: unknown, under: unknown): unknown {
  if (over === undefined) return structuredClone(under);
  if (isMap(over) && isMap(under)) {
    const out: Record<string, unknown> = { ...under };
    for (const [k, v] of Object.entries(over)) out[k] = mergeUnder(v, under[k]);
    return out;
  }
  return over;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
