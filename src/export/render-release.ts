// One release rendered twice, exactly as `render` does (the render setup's render: same layers, same
// airgap rewrite): with every value layer (what install applies: the overlay's target) and with
// the vendor's layers only (base/: the chart's defaults and the vendor's values, plus the
// customer's secrets, see secret-values.ts). The registry and its rewrite are in both, so a new
// chart version changes base/ only.
import type { CommonOptions } from '../options/config.js';
import { InstallerError } from '../common/errors.js';
import type { RunState } from '../run/run-state.js';
import { startRun, type RunContext } from '../run/run-context.js';
import { withRenderSetup, type RenderSetup } from '../run/render-setup.js';
import { withTempDir } from '../common/temp-dir.js';
import type { ExportRelease, ImageRewrite } from './export-release.js';
import { renderedObjects, type RenderedObject } from './manifest-documents.js';
import { secretSets, secretValuePaths, writeSecretLayers } from './secret-values.js';

export interface ReleaseRenders {
  release: ExportRelease;
  /** Every layer: what install applies. */
  customer: RenderedObject[];
  /** The vendor's layers; undefined when the chart does not render without the customer's values. */
  vendor?: RenderedObject[];
  /** Why the vendor's render failed (helm's message, secrets masked). */
  vendorFailure?: string;
  /** The airgap rewrites of the vendor's render: named in base/README.md (the rest in overlay/'s). */
  vendorRewrites?: ImageRewrite[];
}

/** Where the release sits in the export: settled by the caller (one chart, or the plan's graph). */
export interface ReleasePlace {
  folder: string;
  namespace: string;
  dependsOn: string[];
  timeout: string;
}

export async function renderRelease(
  o: CommonOptions & { helmArgs: string[] },
  state: RunState,
  place: ReleasePlace,
): Promise<ReleaseRenders> {
  const run = await startRun({ ...o, namespace: place.namespace }, state, 2);
  run.helm.setRenderFlags(o.helmArgs);
  run.stage('rendering');
  const vendorFiles = layerFiles(run, 'vendor');
  const customerFiles = layerFiles(run, 'customer');
  // The two renders are independent (each its own plan and temporary directory): side by side.
  const [{ customer, imageRewrites }, vendor] = await Promise.all([
    withRenderSetup(run, async (plan) => ({
      customer: await renderObjects(plan, place.namespace),
      imageRewrites: rewritesOf(plan),
    })),
    renderVendor(o, state, place.namespace, {
      release: run.release,
      vendorFiles,
      customerFiles,
      sets: run.resolved.sets,
    }),
  ]);
  const release = exportRelease(run, place, imageRewrites);
  return { release, customer, ...vendor };
}

/** The release's facts both forms share, once its run has read the chart and the value layers. */
export function exportRelease(run: RunContext, place: ReleasePlace, imageRewrites: ImageRewrite[]): ExportRelease {
  const vendorFiles = layerFiles(run, 'vendor');
  const customerFiles = layerFiles(run, 'customer');
  return {
    name: run.release,
    ...place,
    // One chart: its folder is its release's name, known once the chart is read.
    folder: place.folder || run.release,
    chart: { name: run.chart.name, version: run.chart.version, path: run.chart.path },
    vendorValues: vendorFiles,
    customerValues: { files: customerFiles, sets: run.resolved.sets },
    secretValuePaths: secretValuePaths([...vendorFiles, ...customerFiles], run.secrets),
    imageRewrites,
  };
}

export function layerFiles(run: Pick<RunContext, 'resolved'>, source: 'vendor' | 'customer'): string[] {
  return run.resolved.layers.filter((l) => l.source === source).map((l) => l.file);
}

async function renderVendor(
  o: CommonOptions & { helmArgs: string[] },
  state: RunState,
  namespace: string,
  input: { release: string; vendorFiles: string[]; customerFiles: string[]; sets: CommonOptions['sets'] },
): Promise<{ vendor?: RenderedObject[]; vendorFailure?: string; vendorRewrites?: ImageRewrite[] }> {
  return withTempDir('helm-installer-export', async (dir) => {
    const secretLayers = writeSecretLayers(input.customerFiles, state.secrets, dir);
    const vendorOptions = {
      ...o,
      release: input.release,
      namespace,
      baseValues: [...input.vendorFiles, ...secretLayers],
      values: [],
      sets: secretSets(input.sets, state.secrets),
    };
    try {
      const run = await startRun(vendorOptions, state, 2);
      run.helm.setRenderFlags(o.helmArgs);
      return await withRenderSetup(run, async (plan) => ({
        vendor: await renderObjects(plan, namespace),
        vendorRewrites: rewritesOf(plan),
      }));
    } catch (error) {
      // A chart that needs a customer's value (`required`) has no vendor-only render: the
      // release goes to its overlay in full (the README says why). Anything else is a failure.
      if (!(error instanceof InstallerError) || error.exitCode === 1 || error.exitCode === 5) throw error;
      return { vendorFailure: state.secrets.maskText(error.message.split('\n')[0]!) };
    }
  });
}

async function renderObjects(plan: RenderSetup, namespace: string): Promise<RenderedObject[]> {
  const { output } = await plan.render(namespace);
  return renderedObjects([...output].join(''));
}

/** Every reference the run's airgap rewrite changes, where it sits (and in what string, `via`). */
export function rewritesOf(plan: RenderSetup): ImageRewrite[] {
  const images = plan.airgap.plan?.images ?? [];
  return images
    .filter((i) => i.target !== undefined && i.target !== i.source)
    .flatMap((i) =>
      i.occurrences.map((x) => ({
        kind: x.kind,
        name: x.name,
        ...(x.namespace ? { namespace: x.namespace } : {}),
        path: x.path,
        from: x.image,
        to: i.target!,
        ...(x.via ? { via: x.via } : {}),
      })),
    );
}
