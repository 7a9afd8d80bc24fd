// Every release of the app rendered as `render` renders it (same layers, same airgap rewrite,
// hooks and CRDs included), with the images `images` lists: what the specs are made from. One
// chart is an app of one release; a release plan's releases are all rendered, switched on or not
// (as `images` does: a customer may switch one on later).
import { manifestObjects } from '../drift/manifest-objects.js';
import { buildImageCatalog, listedImages, sourceImages, type ImageCatalogInput } from '../images/image-catalog.js';
import { appReleases, appScope, type AppInput } from '../inputs/app-input.js';
import type { CommonOptions } from '../options/config.js';
import { memberState } from '../releases/run-graph.js';
import { withRenderSetup } from '../run/render-setup.js';
import { startRun } from '../run/run-context.js';
import type { RunState } from '../run/run-state.js';
import type { ReleaseRender } from './app-facts.js';

export interface RenderedApp {
  app: string;
  releases: ReleaseRender[];
  /** The images as the charts spell them, and (with --registry) their names in the local registry. */
  images: { source: string[]; local: string[] };
}

export async function renderApp<O extends CommonOptions & { helmArgs: string[] }>(
  o: O,
  state: RunState,
  input: AppInput,
): Promise<RenderedApp> {
  const installNamespace = o.namespace ?? 'default';
  const releases: ReleaseRender[] = [];
  const catalogs: ImageCatalogInput[] = [];
  for (const { options, name } of appReleases(o, input, installNamespace)) {
    const run = await startRun(
      { ...options, namespace: options.namespace ?? installNamespace },
      name ? memberState(state, name) : state,
      2,
    );
    run.helm.setRenderFlags(o.helmArgs);
    run.stage('rendering');
    const namespace = options.namespace ?? installNamespace;
    await withRenderSetup(run, async (plan) => {
      const { output } = await plan.render(namespace);
      releases.push({
        release: run.release,
        namespace,
        chart: { name: run.chart.name, version: run.chart.version, kubeVersion: run.chart.kubeVersion },
        objects: manifestObjects([...output].join('')),
      });
      const found = await plan.imagesOf(plan.userValues);
      catalogs.push({ ...found, annotated: run.chart.annotatedImages, registry: plan.airgap.registry });
    });
  }
  const catalog = buildImageCatalog({
    occurrences: catalogs.flatMap((c) => c.occurrences),
    registries: catalogs.flatMap((c) => c.registries ?? []),
    annotated: catalogs.flatMap((c) => c.annotated ?? []),
    registry: catalogs[0]?.registry,
  });
  const app = appScope(input)?.app ?? releases[0]!.release;
  return {
    app,
    releases,
    images: {
      source: sourceImages(catalog),
      local: catalog.registry ? listedImages(catalog).map((i) => i.reference) : [],
    },
  };
}
