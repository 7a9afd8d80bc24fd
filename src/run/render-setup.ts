// One plan per run, for every command: the values helm gets (the user's layers plus the generated
// registry hints), the image catalog and its rewrite (--registry, --image-pull-secret, pinned
// fields), the post-renderer helm runs through, helm upgrade's arguments, and the chart rendered
// as install applies it. `values`, `render`, `images`, `install`, `install --dry-run` and `plan`
// all take it from here; none assembles its own. The plan owns the run's temporary directory
// (generated values layers, the post-renderer's shim): both are removed when the callback ends.
import type { AirgapSetup } from '../post-render/airgap.js';
import type { UpgradeArguments, ValuesArguments } from '../helm/helm-args.js';
import { parseImagePath } from '../images/extra-image-paths.js';
import type { ImageOccurrence, RegistryOnlyOccurrence } from '../images/manifest-images.js';
import type { PinPlan } from '../post-render/pin-fields.js';
import { withTempDir } from '../common/temp-dir.js';
import { toValuesArguments } from '../inputs/values.js';
import type { RunContext } from './run-context.js';

export interface RenderSetup {
  /** The user's value layers only: what the image catalog is built from (hints must not change it). */
  userValues: ValuesArguments;
  /** What helm gets: the user's layers with the generated ones (registry hints) in their place. */
  values: ValuesArguments;
  airgap: AirgapSetup;
  /** helm upgrade --install's arguments, less what the release state decides (ownership, labels). */
  upgradeArguments(namespace: string | undefined): Omit<UpgradeArguments, 'takeOwnership' | 'labels' | 'dryRun'>;
  /** The chart rendered once per namespace, CRDs and hooks included, and rewritten (see Rendered). */
  render(namespace: string | undefined): Promise<Rendered>;
  /** The images the chart deploys with these values (default: the user's), from helm's rendering. */
  imagesOf(values?: ValuesArguments): Promise<{ occurrences: ImageOccurrence[]; registries: RegistryOnlyOccurrence[] }>;
}

interface Rendered {
  /** helm's render, before the image rewrite (which changes no kind, name or namespace). */
  manifests: string;
  /**
   * The stream rewritten in this process by the post-renderer's own code, hooks included (helm 3's
   * post-renderer never sees hooks); every check of the rewrite (an invalid reference, two images
   * on one local name, a bad pin) has passed by the time render() resolves. Iterated once, by
   * the one step that prints or compares it (it may be a generator, to stream a large chart).
   */
  output: Iterable<string>;
}

export type SetupRun = Pick<RunContext, 'o' | 'chart' | 'helm' | 'release' | 'logger' | 'resolved' | 'signal'>;

export interface RenderSetupOptions {
  /** helm upgrade's own settings (install and plan): its wait, its history, the args after `--`. */
  apply?: { timeout: string; historyMax: number; helmArgs: string[] };
  /** The plan is only read for its images (`images`): no registry hints, no post-renderer. */
  imagesOnly?: boolean;
  /** Fields that keep their live values (drift ignore rules): set in helm's render by the post-renderer. */
  pins?: PinPlan;
  /** `install --test`: the chart's `helm test` hooks run too (their images matter on helm 3). */
  runsTests?: boolean;
}

export async function withRenderSetup<T>(
  run: SetupRun,
  fn: (plan: RenderSetup) => Promise<T>,
  options: RenderSetupOptions = {},
): Promise<T> {
  const userValues = toValuesArguments(run.resolved);
  const pins = options.pins && options.pins.objects.length > 0 ? options.pins : undefined;
  // The chart's values.yaml files, if startRun deferred them: read and checked (exit 3 naming the
  // file) before anything else of the plan.
  void run.chart.defaultValues;
  return withTempDir('helm-installer', async (workDir) => {
    const airgap = await prepareImages(run, userValues, workDir, {
      pins,
      imagesOnly: options.imagesOnly,
      runsTests: options.runsTests,
    });
    try {
      return await fn(planOf(run, airgap, userValues, options));
    } catch (error) {
      // Helm only knows that its post-renderer failed; our post-renderer's report says why, and
      // helm stops before it touches a release when its post-renderer fails.
      throw airgap.postRenderFailure?.() ?? error;
    } finally {
      airgap.dispose?.();
    }
  });
}

function planOf(
  run: SetupRun,
  airgap: AirgapSetup,
  userValues: ValuesArguments,
  options: RenderSetupOptions,
): RenderSetup {
  const { o, chart, release } = run;
  const values = toValuesArguments(
    run.resolved,
    airgap.generated.map((g) => g.file),
  );
  const renders: Record<string, Promise<Rendered>> = {};
  return {
    userValues,
    values,
    airgap,
    upgradeArguments: (namespace) => {
      const apply = options.apply;
      if (!apply)
        throw new Error("internal: this plan was built without helm upgrade's settings (RenderSetupOptions.apply)");
      return {
        release,
        chart: chart.path,
        namespace,
        values,
        timeout: apply.timeout,
        historyMax: apply.historyMax,
        postRendererArgs: airgap.postRendererArgs,
        extraArgs: apply.helmArgs,
      };
    },
    // Once per namespace: the checks and the command that prints or compares it share one render.
    render: (namespace) => (renders[namespace ?? ''] ??= renderOnce(run, airgap, values, namespace)),
    imagesOf: async (wanted = userValues) => {
      if (wanted === userValues && airgap.plan)
        return { occurrences: airgap.plan.images.flatMap((i) => i.occurrences), registries: airgap.plan.registries };
      const { planChartImages } = await import('../post-render/image-plan.js');
      const found = await planChartImages(o, run, wanted, undefined);
      return { occurrences: found.occurrences, registries: found.plan.registries };
    },
  };
}

async function renderOnce(
  run: SetupRun,
  airgap: AirgapSetup,
  values: ValuesArguments,
  namespace: string | undefined,
): Promise<Rendered> {
  const { chart, helm, release } = run;
  // With --registry the image catalog already rendered the chart with these very values.
  const manifests =
    airgap.rendered?.manifests ??
    (await helm
      .template(
        { release, chart: chart.path, namespace, values, postRendererArgs: [], includeCrds: true },
        undefined,
        run.signal,
      )
      .catch((error: unknown) => {
        // A bad values.yaml of the chart is named (file and line, exit 3) instead of helm's message.
        void chart.defaultValues;
        throw error;
      }));
  if (!airgap.rewrite) return { manifests, output: [manifests] };
  const { rewriteRendered } = await import('../post-render/airgap.js');
  return { manifests, output: rewriteRendered(manifests, airgap.rewrite) };
}

/**
 * Without --registry, --image-pull-secret, pins or --app-slug nothing is rewritten and there is nothing to set up:
 * the airgap stage's modules (image catalog, rewrite, registry client; about 8 ms to load) are not
 * loaded. Otherwise loaded here, not at start: an unchanged redeploy never gets this far.
 */
async function prepareImages(
  run: SetupRun,
  userValues: ValuesArguments,
  workDir: string,
  options: { pins?: PinPlan; imagesOnly?: boolean; runsTests?: boolean },
): Promise<AirgapSetup> {
  const { o } = run;
  const { pins } = options;
  // `images` applies nothing: no annotation to set.
  const appSlug = options.imagesOnly ? undefined : o.appSlug;
  if (o.registry || o.imagePullSecret)
    return (await import('../post-render/airgap.js')).prepareAirgap(o, run, userValues, workDir, {
      ...options,
      appSlug,
    });
  const extraPaths = o.imagePaths.map(parseImagePath);
  if (!pins && appSlug === undefined)
    return { extraPaths, generated: [], postRendererArgs: [], env: {}, unrewrittenHooks: [] };
  // A post-renderer that only pins fields or sets the app slug: the airgap stage stays unloaded.
  const [{ checkPinPlan }, { preparePostRenderer }] = await Promise.all([
    import('../post-render/pin-fields.js'),
    import('../post-render/post-renderer-setup.js'),
  ]);
  if (pins) checkPinPlan(pins); // a bad pointer is refused now, before helm runs
  const rewrite = { extraPaths: [], ...(pins ? { pins } : {}), ...(appSlug !== undefined ? { appSlug } : {}) };
  const postRenderer = await preparePostRenderer({ workDir, plan: rewrite, helm: run.helm.traits });
  return {
    extraPaths,
    generated: [],
    postRendererArgs: postRenderer.helmArgs,
    env: postRenderer.env,
    postRenderFailure: postRenderer.failure,
    dispose: postRenderer.dispose,
    rewrite,
    unrewrittenHooks: [],
  };
}
