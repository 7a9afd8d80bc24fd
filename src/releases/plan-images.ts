// `images` with a release plan: the images of every release the plan lists, switched on or not
// (an airgap bundle must already hold what a customer may switch on later), as one list, one
// KOTS additionalImages block and one --check. Each image says which releases need it.
import type { CommonOptions } from '../config.js';
import type { ImagePlan, ImagePlanInput } from '../images/image-plan.js';
import { ARTIFACT_MARK } from '../images/kots-images.js';
import type { RunState } from '../run-state.js';
import { openPlan } from './open-plan.js';
import { planGraph } from './plan-graph.js';
import { chartOptions } from './release-options.js';
import { memberState } from './run-graph.js';

export async function planImageInput<O extends CommonOptions>(
  o: O,
  state: RunState,
  file: string,
  imagesOf: (o: O, state: RunState) => Promise<ImagePlanInput>,
): Promise<ImagePlanInput> {
  const { plan, shared } = openPlan(o, state, file);
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

/** Pure: the list format with the releases that need each image (`ref # web, cache`). */
export function formatPlanImages(plan: ImagePlan): string {
  const lines = new Map<string, { artifact: boolean; releases: Set<string> }>();
  for (const image of plan.images) {
    if (image.nameOf) continue;
    const reference = plan.registry ? (image.target ?? image.source) : image.spellings[0]!;
    const line = lines.get(reference) ?? { artifact: true, releases: new Set<string>() };
    line.artifact &&= image.artifact === true;
    for (const x of image.occurrences) if (x.release) line.releases.add(x.release);
    lines.set(reference, line);
  }
  return [...lines]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([reference, l]) => {
      const releases = [...l.releases].sort().join(', ');
      // An image only a chart annotation names (helm.sh/images) has no release to name.
      const note = l.artifact ? `${ARTIFACT_MARK}${releases ? `; ${releases}` : ''}` : releases ? ` # ${releases}` : '';
      return `${reference}${note}\n`;
    })
    .join('');
}
