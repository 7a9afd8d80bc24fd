// One release's facts for the HelmRelease form, from the same run and plan as `render` and the
// rendered form (render-release.ts): the chart read, each value layer merged by helm itself, the
// values that look secret, the airgap's rewrite, and a way to package the chart for `helm push`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CommonOptions } from '../options/config.js';
import type { RunState } from '../run/run-state.js';
import { startRun, type RunContext } from '../run/run-context.js';
import { withRenderSetup, type RenderSetup } from '../run/render-setup.js';
import type { ExportRelease } from './export-release.js';
import type { ValuePath, Values } from './helmrelease/input.js';
import { secretValuePaths } from './helmrelease/values-split.js';
import { exportRelease, layerFiles, rewritesOf, type ReleasePlace } from './render-release.js';

export interface HelmReleaseFacts {
  release: ExportRelease;
  /** Each layer as helm merges it alone; `generated`: the airgap's registry hints, when there are any. */
  values: { vendor: Values; customer: Values; generated?: Values };
  /** Where a value looks secret, in any layer (the run's SecretRegistry judges, as for every log line). */
  secretPaths: ValuePath[];
  /** Writes the chart to `<destination>/<name>-<version>.tgz`, what `helm push` takes. */
  packageChart: (destination: string) => Promise<void>;
}

export async function helmReleaseFacts(
  o: CommonOptions & { helmArgs: string[] },
  state: RunState,
  place: ReleasePlace,
): Promise<HelmReleaseFacts> {
  const run = await startRun({ ...o, namespace: place.namespace }, state, 2);
  run.helm.setRenderFlags(o.helmArgs);
  run.stage('rendering');
  return withRenderSetup(run, async (plan) => {
    // Rendered as install renders it: a reference the rewrite refuses fails here as it would there.
    await plan.render(place.namespace);
    const values = await layerValues(run, plan);
    const found = [values.vendor, values.customer, values.generated].flatMap((v) =>
      v ? secretValuePaths(v, run.secrets) : [],
    );
    const secretPaths = [...new Map(found.map((p) => [JSON.stringify(p), p])).values()];
    return {
      release: exportRelease(run, place, rewritesOf(plan)),
      values,
      secretPaths,
      packageChart: (dir) => packageChart(run, dir),
    };
  });
}

/**
 * The layers in Flux's order (vendor, customer with its --set folded in, generated). Helm applies
 * --set after every -f file, the registry hints included: so a hint the customer's --set also
 * sets is left out of the generated layer, and the merge gives what helm gives.
 */
async function layerValues(run: RunContext, plan: RenderSetup): Promise<HelmReleaseFacts['values']> {
  const { helm, resolved } = run;
  const hints = plan.airgap.generated.map((g) => g.file);
  // Each merge is a helm process of its own: side by side.
  const [vendor, customer, generated, sets] = await Promise.all([
    helm.mergedValues({ files: layerFiles(run, 'vendor'), sets: [] }),
    helm.mergedValues({ files: layerFiles(run, 'customer'), sets: resolved.sets }),
    hints.length > 0 ? helm.mergedValues({ files: hints, sets: [] }) : undefined,
    hints.length > 0 && resolved.sets.length > 0 ? helm.mergedValues({ files: [], sets: resolved.sets }) : undefined,
  ]);
  if (!generated) return { vendor, customer };
  if (sets) withoutSetPaths(generated, sets);
  return { vendor, customer, generated };
}

const isMap = (v: unknown): v is Values => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Removes from `layer` every value the --set tree replaces (maps merge, anything else is replaced). */
function withoutSetPaths(layer: Values, sets: Values): void {
  for (const [key, value] of Object.entries(sets)) {
    if (!(key in layer)) continue;
    const own = layer[key];
    if (isMap(own) && isMap(value)) withoutSetPaths(own, value);
    else delete layer[key];
  }
}

/** A chart directory through `helm package`; an archive is already what helm package makes. */
async function packageChart(run: RunContext, destination: string): Promise<void> {
  mkdirSync(destination, { recursive: true });
  const { chart } = run;
  if (chart.format === 'archive') copyFileSync(chart.path, join(destination, `${chart.name}-${chart.version}.tgz`));
  else await run.helm.package(chart.path, destination, run.release, run.signal);
}
