// `helm-installer render`: the final manifests, exactly what install would apply (helm template
// with the same layers and the same image rewrite), with no cluster: the render setup's one render,
// rewritten in this process by the post-renderer's own code, hooks included (helm 3's
// post-renderer never sees hooks).
import { once } from 'node:events';
import { defineCommand } from '../command.js';
import { type CommonOptions, commonOptionTable, renderHelmArgs, toCommonOptions } from '../../options/config.js';
import type { RunState } from '../../run/run-state.js';
import { oneChart, resolveInput } from '../../inputs/app-input.js';
import { startRun } from '../../run/run-context.js';
import { withRenderSetup } from '../../run/render-setup.js';

export const renderDefinition = defineCommand({
  name: 'render',
  description: 'print the final manifests (helm template plus the image rewrite); no cluster needed',
  options: { ...commonOptionTable, helmArgs: renderHelmArgs() },
  run: (o, state) => renderCommand({ ...toCommonOptions(o), helmArgs: o.helmArgs }, state),
});

export async function renderCommand(o: CommonOptions & { helmArgs: string[] }, state: RunState): Promise<number> {
  oneChart(resolveInput(o, state.progress));
  const run = await startRun(o, state, 2);
  run.helm.setRenderFlags(o.helmArgs);
  run.stage('rendering');
  return withRenderSetup(run, async (plan) => {
    const { output } = await plan.render(o.namespace);
    for (const chunk of output) {
      if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    }
    return 0;
  });
}
