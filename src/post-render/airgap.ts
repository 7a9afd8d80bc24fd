// Stage "images": everything --registry (and --image-pull-secret, --image-path) changes, for one
// run: the image catalog (from the chart's own rendering) and a values layer of registry hints
// checked against that plan (image-plan.ts), the post-renderer that rewrites every image (the
// guarantee), and the registry preflight on the plan's local names (registry-check.ts).
import type { Logger } from 'pino';
import type { InstallerError } from '../common/errors.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import { parseRegistryAddress, type LocalRegistry } from '../common/image-reference.js';
import type { ImageCatalog } from '../images/image-catalog.js';
import { splitManifestStream } from '../rendered/manifest-stream.js';
import { prepareRewrite } from './rewrite-manifests.js';
import type { RewritePlan } from './rewrite-plan.js';
import { checkPinPlan, type PinPlan } from './pin-fields.js';
import { parseImagePath } from '../images/extra-image-paths.js';
import type { ExtraImagePath, ImageOccurrence } from '../images/manifest-images.js';
import { preparePostRenderer } from './post-renderer-setup.js';
import { hintedPlan, planChartImages, type AirgapContext, type AirgapOptions } from './image-plan.js';
import { checkRegistry, type PreflightSettings } from './registry-check.js';

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
