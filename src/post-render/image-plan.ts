// The image catalog of one run with --registry (or `images`): the chart rendered without a
// post-renderer and every image found in it, then the first set of registry hints (a values layer)
// with which the chart still deploys the same images, under their KOTS names; and the hook images
// helm 3 will not rewrite. airgap.ts sets up the rest of the stage from it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ChartInfo } from '../inputs/chart.js';
import type { HelmClient } from '../helm/helm-client.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import { parseImageReference, pullsKotsImage, type LocalRegistry } from '../common/image-reference.js';
import { buildImageCatalog, describeRegistryOnly, type ImageCatalog } from '../images/image-catalog.js';
import { parseImagePath } from '../images/extra-image-paths.js';
import { collectAll, type ImageOccurrence } from '../images/manifest-images.js';
import { buildHints, withoutGlobalRegistry } from '../images/values-hints.js';
import { compareHintedImages } from '../images/verify-hints.js';

/** The options the airgap stage reads (the common options' registry, pull secret, extra image paths and namespace). */
export interface AirgapOptions {
  registry?: string;
  imagePullSecret?: string;
  imagePaths: string[];
  namespace?: string;
}

export interface AirgapContext {
  chart: ChartInfo;
  helm: HelmClient;
  release: string;
  logger: Logger;
}

/**
 * Renders the chart (hooks and CRDs included, no post-renderer) and plans its images: `images`
 * and `--registry` alike. The manifests are returned too: the run's one render of these values.
 */
export async function planChartImages(
  o: AirgapOptions,
  ctx: Omit<AirgapContext, 'logger'>,
  values: ValuesArguments,
  registry: LocalRegistry | undefined,
): Promise<{ plan: ImageCatalog; occurrences: ImageOccurrence[]; manifests: string }> {
  const manifests = await ctx.helm.template({
    release: ctx.release,
    chart: ctx.chart.path,
    namespace: o.namespace,
    values,
    postRendererArgs: [],
    includeCrds: true,
  });
  const located = collectAll(manifests, o.imagePaths.map(parseImagePath));
  const occurrences = located.images;
  return {
    plan: buildImageCatalog({
      occurrences,
      registries: located.registries,
      annotated: ctx.chart.annotatedImages,
      registry,
    }),
    occurrences,
    manifests,
  };
}

/**
 * The plan with registry hints chosen, and the hook images helm 3 will not rewrite: it does not
 * post-render hooks, and every hook but `helm test`'s (unless --test asks) runs at install.
 */
export async function hintedPlan(
  o: AirgapOptions,
  ctx: AirgapContext,
  userValues: ValuesArguments,
  registry: LocalRegistry,
  workDir: string,
  runsTests: boolean | undefined,
): Promise<{ plan: ImageCatalog; manifests: string; hintsFile?: string; unrewrittenHooks: ImageOccurrence[] }> {
  const chosen = await planWithHints(o, ctx, userValues, registry, workDir);
  // `helm test` hooks do not run at install unless --test asks; every other hook does,
  // un-post-rendered on helm 3 (helm test then runs the hook as the release stored it).
  const runsAtInstall = (hook: string) => hook.split(',').some((h) => runsTests || !h.trim().startsWith('test'));
  const unrewrittenHooks = ctx.helm.traits.postRendersHooks
    ? []
    : chosen.occurrences.filter(
        (h) => h.hook !== undefined && runsAtInstall(h.hook) && !pullsKotsImage(parseImageReference(h.image), registry),
      );
  return { plan: chosen.plan, manifests: chosen.manifests, hintsFile: chosen.hintsFile, unrewrittenHooks };
}

/**
 * The image catalog, from what the chart deploys WITHOUT hints (the truth every rewrite must keep),
 * and the first set of registry hints that keeps every image: its values file and its render.
 */
async function planWithHints(
  o: AirgapOptions,
  ctx: AirgapContext,
  userValues: ValuesArguments,
  registry: LocalRegistry,
  workDir: string,
): Promise<{ plan: ImageCatalog; occurrences: ImageOccurrence[]; manifests: string; hintsFile?: string }> {
  // The first hinted render does not depend on the plain one: both run at once.
  const plainRender = planChartImages(o, ctx, userValues, registry);
  plainRender.catch(() => undefined); // awaited below; a failure there is reported there
  // Hints follow the values the chart will really see (a vendor layer may have moved an image).
  let effective: unknown;
  try {
    effective = mergeForHints(ctx.chart.defaultValues, await ctx.helm.mergedValues(userValues));
  } catch (error) {
    await plainRender.catch(() => undefined);
    throw error;
  }
  const renders = renderHintCandidates(o, ctx, userValues, registry, buildHints(effective, registry), workDir);
  let planned: Awaited<typeof plainRender>;
  try {
    planned = await plainRender;
  } catch (error) {
    if (renders[0]) await renders[0].result();
    throw error;
  }
  for (const r of planned.plan.registries) {
    const what = r.unreadable !== undefined ? { unreadable: r.unreadable } : { registryOnly: r.value };
    ctx.logger.warn({ ...what, kind: r.kind, name: r.name, path: r.path }, describeRegistryOnly(r, registry));
  }
  for (const w of planned.plan.warnings) ctx.logger.warn(w);
  const hinted = await chooseHints(ctx, registry, renders, planned.occurrences);
  if (!hinted) return planned;
  return { plan: planned.plan, occurrences: hinted.occurrences, manifests: hinted.manifests, hintsFile: hinted.file };
}

/**
 * A set of registry hints to try: all of them, then (for charts that prefix
 * `global.imageRegistry` to a multi-segment repository) all but the global registry.
 */
interface HintCandidate {
  file: string;
  hints: Record<string, unknown>;
  allowSwitches: string[];
  withGlobalRegistry: boolean;
  /** Renders the chart with this set, once (the first set starts beside the plain render). */
  result: () => Promise<HintRender>;
}
type HintRender = { occurrences: ImageOccurrence[]; manifests: string } | { error: Error };

/**
 * The hint sets to try. The first renders at once, beside the plain render; the fallback only
 * when the first fails: helm's rendering is the cost of checking hints, and most charts pass
 * with the first set (or have no global registry to drop).
 */
function renderHintCandidates(
  o: AirgapOptions,
  ctx: AirgapContext,
  userValues: ValuesArguments,
  registry: LocalRegistry,
  built: ReturnType<typeof buildHints>,
  workDir: string,
): HintCandidate[] {
  if (Object.keys(built.values).length === 0) return [];
  const sets = [built.values];
  const bare = withoutGlobalRegistry(built.values);
  if (JSON.stringify(bare) !== JSON.stringify(built.values)) sets.push(bare);
  const candidates = sets.map((hints, i): HintCandidate => {
    const file = join(workDir, i === 0 ? 'registry-hints.json' : `registry-hints-${i + 1}.json`);
    let started: Promise<HintRender> | undefined;
    // JSON is YAML that go-yaml reads without dialect surprises.
    const result = () =>
      (started ??= writeFile(file, JSON.stringify(hints, null, 2))
        .then(() => planChartImages(o, ctx, { files: [...userValues.files, file], sets: userValues.sets }, registry))
        .then(
          (r) => ({ occurrences: r.occurrences, manifests: r.manifests }),
          (error: unknown) => ({ error: error instanceof Error ? error : new Error(String(error)) }),
        ));
    return {
      file,
      hints,
      allowSwitches: built.allowSwitches,
      withGlobalRegistry: i === 0 && 'global' in hints,
      result,
    };
  });
  void candidates[0]!.result();
  return candidates;
}

/**
 * Keeps the first hint set with which every image is still the one the chart deploys (unchanged
 * or under its exact KOTS name); none when no set passes: the post-render is the guarantee.
 */
async function chooseHints(
  ctx: AirgapContext,
  registry: LocalRegistry,
  candidates: HintCandidate[],
  plain: ImageOccurrence[],
): Promise<{ file: string; occurrences: ImageOccurrence[]; manifests: string } | undefined> {
  const { logger } = ctx;
  for (const [i, candidate] of candidates.entries()) {
    const result = await candidate.result();
    const next =
      i + 1 < candidates.length
        ? 'trying without global.imageRegistry'
        : 'leaving hints out: the post-renderer rewrites';
    if ('error' in result) {
      logger.warn(
        { attempt: i + 1, cause: result.error.message.split('\n')[0] },
        `with registry hints the chart does not render or names an invalid image; ${next}`,
      );
      continue;
    }
    const mismatches = compareHintedImages(plain, result.occurrences, registry);
    if (mismatches.length === 0) {
      for (const path of candidate.allowSwitches)
        logger.info({ value: path }, `registry hints change images of a chart that verifies them: set ${path}=true`);
      logger.info({ file: candidate.file, globalRegistry: candidate.withGlobalRegistry }, 'registry hints applied');
      return { file: candidate.file, occurrences: result.occurrences, manifests: result.manifests };
    }
    logger.warn(
      { attempt: i + 1, mismatches: mismatches.slice(0, 5) },
      `registry hints would change ${mismatches.length} image(s) (e.g. ${mismatches[0]!.expected ?? 'nothing'} -> ${mismatches[0]!.got}); ${next}`,
    );
  }
  return undefined;
}

/** Chart defaults overlaid with the user's merged values: maps merge, the rest replaces. */
function mergeForHints(base: unknown, over: unknown): unknown {
  if (isMap(base) && isMap(over)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = v === null ? undefined : mergeForHints(base[k], v);
    return out;
  }
  return over === undefined ? base : over;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
