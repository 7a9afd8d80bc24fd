// What every command starts with (logger, chart, values, helm), and the per-run working directory
// shared by values, render, images and install: generated values layers (registry hints) and the
// post-renderer that rewrites images (and keeps ignored fields), both scoped to one callback and
// removed afterwards. Beside the commands, not among them: install's pipeline (src/install/) uses
// it too, and nothing below the CLI imports from src/commands/.
import { loadChart, type ChartInfo } from './chart.js';
import type { CommonOptions } from './config.js';
import type { AirgapSetup } from './airgap.js';
import { createBaseContext, createHelmClient } from './context.js';
import { parseImagePath } from './images/extra-image-paths.js';
import type { HelmClient } from './helm/helm-client.js';
import type { PinPlan } from './images/pin-fields.js';
import type { ValuesArguments } from './helm/helm-args.js';
import type { Logger } from './logger.js';
import type { RunState } from './run-state.js';
import type { SecretRegistry } from './secrets.js';
import { withTempDir } from './temp-dir.js';
import { resolveValues, type ResolvedValues } from './values.js';

export type { AirgapSetup };

export interface CommandStart {
  logger: Logger;
  secrets: SecretRegistry;
  chart: ChartInfo;
  release: string;
  resolved: ResolvedValues;
  helm: HelmClient;
}

/**
 * The stages every command runs first: logger, chart, value layers, helm. Logs go to stdout
 * (fd 1) for `install`, to stderr (fd 2) where stdout is data. `deferChartValues`: the chart's
 * values.yaml files are read by withAirgap (or any read of chart.defaultValues) instead.
 */
export async function startCommand(o: CommonOptions, state: RunState, logTo: 1 | 2, options: { deferChartValues?: boolean } = {}): Promise<CommandStart> {
  const { logger, secrets } = createBaseContext(o, logTo, state);
  state.progress.namespace = o.namespace;
  state.progress.action = 'reading the chart';
  const chart = await loadChart({ chart: o.chart, appDir: o.appDir }, { deferValues: options.deferChartValues });
  const release = o.release ?? chart.name;
  state.progress.release = release;
  state.progress.action = 'reading values';
  const resolved = resolveValues({ baseValues: o.baseValues, customerValues: o.values, sets: o.sets }, secrets);
  const helm = await createHelmClient(o, { logger, secrets });
  return { logger, secrets, chart, release, resolved, helm };
}

export async function withAirgap<T>(
  o: CommonOptions,
  start: Pick<CommandStart, 'chart' | 'helm' | 'release' | 'logger'>,
  userValues: ValuesArguments,
  fn: (setup: AirgapSetup) => Promise<T>,
  options: {
    chartValuesByCaller?: boolean;
    /**
     * Fields that keep their live values through the upgrade (drift ignore rules): the
     * post-renderer sets them in helm's render, helm upgrade's and helm template's alike. Without
     * --registry or --image-pull-secret it only pins: no render of its own, no image search.
     */
    pins?: PinPlan;
  } = {},
): Promise<T> {
  const pins = options.pins && options.pins.objects.length > 0 ? options.pins : undefined;
  // The chart's values.yaml files, if startCommand deferred them: read and checked (exit 3 naming
  // the file) before anything else of the run, as every other command does at start; or by the
  // caller (install reads them while helm renders, before the check's outcome is taken).
  if (!options.chartValuesByCaller) void start.chart.defaultValues;
  return withTempDir('helm-installer', async (workDir) => {
    // Without --registry or --image-pull-secret nothing is rewritten and there is nothing to set
    // up: the airgap stage's modules (image plan, rewrite, registry client; about 8 ms to load)
    // are not loaded, and install's render check starts that much sooner. Otherwise loaded here,
    // not at start: an unchanged redeploy never gets this far (issue 10's no-op).
    const setup: AirgapSetup =
      !o.registry && !o.imagePullSecret
        ? pins
          ? await preparePinsOnly(o, start, pins, workDir)
          : { extraPaths: o.imagePaths.map(parseImagePath), generated: [], postRendererArgs: [], env: {}, unrewrittenHooks: [] }
        : await (await import('./airgap.js')).prepareAirgap(o, start, userValues, workDir, { pins });
    try {
      return await fn(setup);
    } catch (error) {
      // Helm only knows that its post-renderer failed; our post-renderer's report says why, and
      // helm stops before it touches a release when its post-renderer fails.
      throw (await setup.postRenderFailure?.()) ?? error;
    } finally {
      setup.dispose?.();
    }
  });
}

/** A post-renderer that only pins fields (no registry, no pull secret): the airgap stage stays unloaded. */
async function preparePinsOnly(o: CommonOptions, start: Pick<CommandStart, 'helm'>, pins: PinPlan, workDir: string): Promise<AirgapSetup> {
  const [{ checkPinPlan }, { preparePostRenderer }] = await Promise.all([import('./images/pin-fields.js'), import('./images/post-renderer-setup.js')]);
  checkPinPlan(pins); // a bad pointer is refused now, before helm runs
  const rewrite = { extraPaths: [], pins };
  const postRenderer = await preparePostRenderer({ workDir, plan: rewrite, helmMajor: start.helm.major });
  return {
    extraPaths: o.imagePaths.map(parseImagePath),
    generated: [],
    postRendererArgs: postRenderer.helmArgs,
    env: postRenderer.env,
    postRenderFailure: postRenderer.failure,
    dispose: postRenderer.dispose,
    rewrite,
    unrewrittenHooks: [],
  };
}
