// One install plan per run: the values helm gets (the user's layers plus the generated registry
// hints), the image rewrite (--registry), and the helm arguments built from them. Built once and
// used by every step that renders or applies (the render check, the dry run, the upgrade), so
// none assembles its own.
import type { UpgradeArguments, ValuesArguments } from '../helm/helm-args.js';
import { withAirgap, type AirgapSetup } from '../command-start.js';
import type { PinPlan } from '../images/pin-fields.js';
import { toValuesArguments } from '../values.js';
import type { InstallRun } from './run-context.js';

export interface InstallPlan {
  values: ValuesArguments;
  airgap: AirgapSetup;
  /** helm upgrade --install's arguments, less what the state decides (ownership, labels). */
  upgradeArguments(namespace: string | undefined): Omit<UpgradeArguments, 'takeOwnership' | 'labels' | 'dryRun'>;
  /**
   * The chart rendered as helm upgrade will apply it (CRDs included: helm creates those from
   * crds/ too, and the RBAC preflight must see them), image rewrite included. With --registry
   * the image plan already rendered the chart with these very values: that render is rewritten
   * here by the post-renderer's own code instead of asking helm again.
   */
  render(namespace: string | undefined): Promise<string>;
}

/** `pins`: fields under an ignore rule, kept at their live values (ignored-fields.ts). */
export async function withInstallPlan<T>(run: InstallRun, fn: (plan: InstallPlan) => Promise<T>, pins?: PinPlan): Promise<T> {
  const { o, chart, helm, release, logger, resolved } = run;
  return withAirgap(o, { chart, helm, release, logger }, toValuesArguments(resolved), async (airgap) => {
    const values = toValuesArguments(resolved, airgap.generated.map((g) => g.file));
    const plan: InstallPlan = {
      values,
      airgap,
      upgradeArguments: (namespace) => ({
        release,
        chart: chart.path,
        namespace,
        values,
        timeout: o.timeout,
        historyMax: o.historyMax,
        postRendererArgs: airgap.postRendererArgs,
        extraArgs: o.helmArgs,
      }),
      render: async (namespace) => {
        if (airgap.rendered && airgap.rewrite) {
          const { rewriteRendered } = await import('../airgap.js');
          rewriteRendered(airgap.rendered.manifests, airgap.rewrite);
          return airgap.rendered.manifests;
        }
        return helm.template({ release, chart: chart.path, namespace, values, postRendererArgs: airgap.postRendererArgs, includeCrds: true }, airgap.env, run.signal);
      },
    };
    return fn(plan);
  }, { pins });
}
