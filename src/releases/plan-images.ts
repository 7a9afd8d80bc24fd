// `images` with a release plan: the images of every release the plan lists, switched on or not
// (an airgap bundle must already hold what a customer may switch on later), as one list, one
// KOTS additionalImages block and one --check. Each occurrence keeps its release, which `--why`
// and `--format json` name.
import type { CommonOptions } from '../options/config.js';
import type { ImagePlanInput } from '../images/image-plan.js';
import type { RunState } from '../run/run-state.js';
import type { OpenedPlan } from '../inputs/app-input.js';
import { planGraph } from './plan-graph.js';
import { chartOptions } from './release-options.js';
import { memberState } from './run-graph.js';

export async function planImageInput<O extends CommonOptions>(
  o: O,
  state: RunState,
  { plan, shared }: OpenedPlan,
  imagesOf: (o: O, state: RunState) => Promise<ImagePlanInput>,
): Promise<ImagePlanInput> {
  // The graph's checks (cycles, unknown dependencies, duplicates) hold here too; no cluster is
  // asked, so a release without a namespace of its own is placed in 'default' for them.
  planGraph(plan, o.namespace ?? 'default', {});
  const inputs: ImagePlanInput[] = [];
  for (const r of plan.releases) {
    const input = await imagesOf(chartOptions(o, r, shared), memberState(state, r.name));
    inputs.push({ ...input, occurrences: input.occurrences.map((x) => ({ ...x, release: r.name })) });
  }
  return {
    occurrences: inputs.flatMap((i) => i.occurrences),
    registries: inputs.flatMap((i) => i.registries ?? []),
    annotated: inputs.flatMap((i) => i.annotated ?? []),
    registry: inputs[0]?.registry,
  };
}
