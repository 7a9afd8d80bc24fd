// `images` of the app: every release it lists, switched on or not (an airgap bundle must already
// hold what a customer may switch on later), as one list, one KOTS additionalImages block and one
// --check; one chart is an app of one release. Each occurrence of a release plan keeps its
// release, which `--why` and `--format json` name.
import type { ImageCatalogInput } from '../images/image-catalog.js';
import { appReleases, type AppInput } from '../inputs/app-input.js';
import type { CommonOptions } from '../options/config.js';
import type { RunState } from '../run/run-state.js';
import { memberState } from './run-graph.js';

export async function appImageInput<O extends CommonOptions>(
  o: O,
  state: RunState,
  input: AppInput,
  imagesOf: (o: O, state: RunState) => Promise<ImageCatalogInput>,
): Promise<ImageCatalogInput> {
  const inputs: ImageCatalogInput[] = [];
  // The graph's checks (cycles, unknown dependencies, duplicates) hold here too; no cluster is
  // asked, so a release without a namespace of its own is placed in 'default' for them.
  for (const { options, name } of appReleases(o, input, o.namespace ?? 'default')) {
    const found = await imagesOf(options, name ? memberState(state, name) : state);
    inputs.push(name ? { ...found, occurrences: found.occurrences.map((x) => ({ ...x, release: name })) } : found);
  }
  return {
    occurrences: inputs.flatMap((i) => i.occurrences),
    registries: inputs.flatMap((i) => i.registries ?? []),
    annotated: inputs.flatMap((i) => i.annotated ?? []),
    registry: inputs[0]?.registry,
  };
}
