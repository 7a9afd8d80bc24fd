// `helm-installer render`: the final manifests, exactly what install would apply (helm template
// with the same layers and the same image rewrite), with no cluster. Render owns the whole
// stream, so it rewrites in this process with the post-renderer's own code, hooks included (helm
// 3's post-renderer never sees hooks), and prints the run's one render: with --registry, the one
// the image plan was built from.
import { once } from 'node:events';
import { defineCommand } from '../command.js';
import { type CommonOptions, commonOptionTable, renderHelmArgs, toCommonOptions } from '../config.js';
import { rewriteRendered } from '../airgap.js';

import type { RunState } from '../run-state.js';
import { toValuesArguments } from '../values.js';
import { startCommand, withAirgap } from '../command-start.js';

export const renderDefinition = defineCommand({
  name: 'render',
  description: 'print the final manifests (helm template plus the image rewrite); no cluster needed',
  options: { ...commonOptionTable, helmArgs: renderHelmArgs() },
  run: (o, state) => renderCommand({ ...toCommonOptions(o), helmArgs: o.helmArgs }, state),
});

export async function renderCommand(o: CommonOptions & { helmArgs: string[] }, state: RunState): Promise<number> {
  const start = await startCommand(o, state, 2);
  const { chart, release, resolved, helm } = start;
  helm.setRenderFlags(o.helmArgs);
  state.progress.action = 'rendering';
  return withAirgap(o, start, toValuesArguments(resolved), async (airgap) => {
    const manifests =
      airgap.rendered?.manifests ??
      (await helm.template({
        release,
        chart: chart.path,
        namespace: o.namespace,
        values: toValuesArguments(resolved, airgap.generated.map((g) => g.file)),
        postRendererArgs: [],
        includeCrds: true,
      }));
    const chunks = airgap.rewrite ? rewriteRendered(manifests, airgap.rewrite) : [manifests];
    for (const chunk of chunks) {
      if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    }
    return 0;
  });
}
