// Stage "images": everything --registry (and --image-pull-secret, --image-path) changes, for one
// run: the image catalog (from the chart's own rendering), a values layer of registry hints checked
// against that plan, the post-renderer that rewrites every image (the guarantee), and the
// registry preflight on the plan's local names.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChartInfo } from '../inputs/chart.js';
import { type InstallerError, InvalidInputError, PreflightError } from '../common/errors.js';
import type { HelmClient } from '../helm/helm-client.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import {
  parseImageReference,
  parseRegistryAddress,
  pullsKotsImage,
  type LocalRegistry,
} from '../common/image-reference.js';
import {
  buildImageCatalog,
  describeOccurrence,
  describeRegistryOnly,
  requiredLocalImages,
  targetOf,
  type ImageCatalog,
} from '../images/image-catalog.js';
import { splitManifestStream } from '../rendered/manifest-stream.js';
import { prepareRewrite } from './rewrite-manifests.js';
import type { RewritePlan } from './rewrite-plan.js';
import { checkPinPlan, type PinPlan } from './pin-fields.js';
import { parseImagePath } from '../images/extra-image-paths.js';
import { collectAll, type ExtraImagePath, type ImageOccurrence } from '../images/manifest-images.js';
import { preparePostRenderer } from './post-renderer-setup.js';
import { checkImagesExist } from '../registry/registry-preflight.js';
import { buildHints, withoutGlobalRegistry } from '../images/values-hints.js';
import { compareHintedImages } from '../images/verify-hints.js';
import type { Logger } from 'pino';
import { MiB, readInputFile } from '../common/read-input.js';
import { registerPullSecret, type SecretRegistry } from '../common/secrets.js';

/** The options the airgap stage reads (the common options' registry, pull secret, extra image paths and namespace). */
export interface AirgapOptions {
  registry?: string;
  imagePullSecret?: string;
  imagePaths: string[];
  namespace?: string;
}

export interface PreflightSettings {
  pullSecretFile?: string;
  caFile?: string;
  /** The credentials read from the pull secret file are registered here, to be masked. */
  secrets?: SecretRegistry;
}

export interface AirgapSetup {
  registry?: LocalRegistry;
  extraPaths: ExtraImagePath[];
  /** Generated values layers, placed above the customer's files and below --set. */
  generated: { file: string; label: string }[];
  postRendererArgs: string[];
  env: Record<string, string>;
  /** The post-renderer's own failure, when it reported one (kept in memory: see post-render-run.ts). */
  postRenderFailure?: () => InstallerError | undefined;
  /** Stops serving helm's post-renders: once the run's last helm has ended. */
  dispose?: () => void;
  /** The run's image catalog (with --registry): what the chart deploys and each image's local name. */
  plan?: ImageCatalog;
  /**
   * The one render of the run with --registry: the chart with the chosen values layers (hints or
   * none), hooks and CRDs included, not yet rewritten. `render` prints it rewritten and `install`
   * checks its rewrite, so neither asks helm to render the chart again.
   */
  rendered?: { manifests: string };
  /** What the rewrite does (registry, extra paths, pull secret); absent when nothing changes. */
  rewrite?: RewritePlan;
  /**
   * Hook images that reach the cluster under a name that is not their KOTS name: helm 3 never
   * post-renders hooks, so only an exact values hint fixes them.
   */
  unrewrittenHooks: ImageOccurrence[];
  /** Checks that every image of the plan is in the local registry under its KOTS name. */
  preflight?: (logger: Logger, settings: PreflightSettings) => Promise<void>;
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
 * The rendered stream rewritten in this process by the post-renderer's own code: `render` owns
 * the whole stream, so hooks are rewritten too, on helm 3 as well (whose post-renderer never sees
 * them). Every check (invalid reference, collision) runs before the first chunk comes out.
 */
export function rewriteRendered(manifests: string, rewrite: RewritePlan): Generator<string> {
  return prepareRewrite(splitManifestStream(manifests), rewrite).output();
}

/** With --registry or --image-pull-secret only: withRenderSetup (src/run/render-setup.ts) sets up a run that rewrites nothing without loading this module. */
export async function prepareAirgap(
  o: AirgapOptions,
  ctx: AirgapContext,
  userValues: ValuesArguments,
  workDir: string,
  options: { pins?: PinPlan; imagesOnly?: boolean; appSlug?: string; runsTests?: boolean } = {},
): Promise<AirgapSetup> {
  const { helm } = ctx;
  const extraPaths = o.imagePaths.map(parseImagePath);
  const registry = o.registry ? parseRegistryAddress(o.registry) : undefined;
  // Pins join the image rewrite's plan: the post-renderer does both in one pass.
  if (options.pins) checkPinPlan(options.pins); // a bad pointer is refused now, before helm runs
  const rewrite: RewritePlan = {
    registry,
    extraPaths,
    imagePullSecret: o.imagePullSecret,
    ...(options.pins ? { pins: options.pins } : {}),
    ...(options.appSlug !== undefined ? { appSlug: options.appSlug } : {}),
  };

  const generated: AirgapSetup['generated'] = [];
  if (registry && options.imagesOnly) {
    // `images` lists the plan: no hints to choose, nothing to apply, its own report of the plan.
    const planned = await planChartImages(o, ctx, userValues, registry);
    return {
      registry,
      extraPaths,
      generated,
      postRendererArgs: [],
      env: {},
      plan: planned.plan,
      rendered: { manifests: planned.manifests },
      rewrite,
      unrewrittenHooks: [],
    };
  }
  const hinted = registry ? await hintedPlan(o, ctx, userValues, registry, workDir, options.runsTests) : undefined;
  if (hinted?.hintsFile) generated.push({ file: hinted.hintsFile, label: 'registry hints' });
  const plan = hinted?.plan;
  const unrewrittenHooks = hinted?.unrewrittenHooks ?? [];
  const postRenderer = await preparePostRenderer({ workDir, plan: rewrite, helm: helm.traits });
  return {
    registry,
    extraPaths,
    generated,
    postRendererArgs: postRenderer.helmArgs,
    env: postRenderer.env,
    postRenderFailure: postRenderer.failure,
    dispose: postRenderer.dispose,
    ...(plan ? { plan } : {}),
    ...(hinted ? { rendered: { manifests: hinted.manifests } } : {}),
    rewrite,
    unrewrittenHooks,
    preflight:
      registry && plan
        ? (logger, settings) => checkRegistry(plan, unrewrittenHooks, registry, logger, settings)
        : undefined,
  };
}

/**
 * The plan with registry hints chosen, and the hook images helm 3 will not rewrite: it does not
 * post-render hooks, and every hook but `helm test`'s (unless --test asks) runs at install.
 */
async function hintedPlan(
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

async function checkRegistry(
  plan: ImageCatalog,
  unrewrittenHooks: ImageOccurrence[],
  registry: LocalRegistry,
  logger: Logger,
  settings: PreflightSettings,
): Promise<void> {
  if (unrewrittenHooks.length > 0) {
    throw new PreflightError(
      [
        `${unrewrittenHooks.length} hook image(s) would be pulled from outside ${registry.address}: helm 3 does not post-render hooks`,
        ...unrewrittenHooks.map(
          (h) => `  ${h.image} -> ${targetOf(plan, h.image) ?? h.image} (${describeOccurrence(h)})`,
        ),
      ].join('\n'),
      {
        hint:
          'Set the chart value that renders each image to the local name after "->" (helm-installer images --why <image> names where it comes from), ' +
          'or run with helm 4 (HELM_BIN), which post-renders hooks; --skip-preflight skips this check and the hook pulls from the internet.',
      },
    );
  }
  // The same names the post-renderer writes: the plan's KOTS names.
  const images = requiredLocalImages(plan);
  const dockerConfigJson = settings.pullSecretFile
    ? readPullSecret(settings.pullSecretFile, settings.secrets)
    : undefined;
  const result = await checkImagesExist(images, { dockerConfigJson, caFile: settings.caFile });
  logger.info(
    { registry: registry.address, present: result.present.length, missing: result.missing.length },
    'registry preflight',
  );
  if (result.missing.length > 0) {
    throw new PreflightError(
      [
        `${result.missing.length} of ${images.length} images are missing from the registry ${registry.address}:`,
        ...result.missing.map((m) => `  ${m.image} (${m.reason})`),
      ].join('\n'),
      {
        hint: 'Push the airgap bundle to the registry (KOTS does on upload), or fix --registry; --skip-preflight skips this check.',
      },
    );
  }
}

const PULL_SECRET_HINT =
  'Mount the pull secret (its .dockerconfigjson key) at that path, or unset --pull-secret-file (HELM_INSTALLER_PULL_SECRET_FILE).';

function readPullSecret(file: string, secrets: SecretRegistry | undefined): string {
  let text: string;
  try {
    text = readInputFile(file, { what: 'pull secret file', maxBytes: MiB, hint: PULL_SECRET_HINT });
  } catch (err) {
    if (err instanceof InvalidInputError) throw err;
    throw new InvalidInputError(`cannot read the pull secret file ${file}: ${(err as Error).message}`, {
      file,
      hint: PULL_SECRET_HINT,
    });
  }
  if (secrets) registerPullSecret(text, secrets);
  return text;
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
