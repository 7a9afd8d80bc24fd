// `helm-installer render`: the final manifests, exactly what install would apply (helm template
// with the same layers and the same image rewrite), with no cluster.
import type { RunState } from '../run-state.js';
import { loadChart } from '../chart.js';
import type { CommonOptions } from '../config.js';
import { createBaseContext, createHelmClient } from '../context.js';
import { resolveValues, toValuesArguments } from '../values.js';
import { withAirgap } from './prepare.js';

export async function renderCommand(o: CommonOptions, state: RunState): Promise<number> {
  const base = createBaseContext(o, 2, state);
  state.progress.action = 'reading the chart';
  const chart = await loadChart({ chart: o.chart, appDir: o.appDir });
  const resolved = resolveValues({ baseValues: o.baseValues, customerValues: o.values, sets: o.sets }, base.secrets);
  const helm = await createHelmClient(o, base);
  return withAirgap(o, chart, helm, toValuesArguments(resolved), async (airgap) => {
    const manifests = await helm.template(
      {
        release: o.release ?? chart.name,
        chart: chart.path,
        namespace: o.namespace,
        values: toValuesArguments(resolved, airgap.generated.map((g) => g.file)),
        postRendererArgs: airgap.postRendererArgs,
        includeCrds: true,
      },
      airgap.env,
    );
    process.stdout.write(manifests);
    return 0;
  });
}
