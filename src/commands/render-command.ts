// `helm-installer render`: the final manifests, exactly what install would apply (helm template
// with the same layers and the same image rewrite), with no cluster.
import type { CommonOptions } from '../config.js';
import type { RunState } from '../run-state.js';
import { toValuesArguments } from '../values.js';
import { startCommand, withAirgap } from './prepare.js';

export async function renderCommand(o: CommonOptions, state: RunState): Promise<number> {
  const { chart, release, resolved, helm } = await startCommand(o, state, 2);
  state.progress.action = 'rendering';
  return withAirgap(o, chart, helm, toValuesArguments(resolved), async (airgap) => {
    const manifests = await helm.template(
      {
        release,
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
