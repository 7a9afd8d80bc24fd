// `export --format rendered`, the orchestrator: settle the releases, render each twice
// (render-release.ts), split each into base, overlay and secrets (overlay-plan.ts), refuse a
// secret that would sit in clear, then write every file at once (write-folder.ts).
import type { CommonOptions } from '../options/config.js';
import { InvalidInputError, UsageError } from '../common/errors.js';
import { createLogger } from '../common/logger.js';
import { mapBounded } from '../drift/detect-drift.js';
import type { AppInput } from '../inputs/app-input.js';
import { memberState } from '../releases/run-graph.js';
import type { RunState } from '../run/run-state.js';
import { exportReadme, type ReleaseOutcome } from './export-readme.js';
import { fluxFolder, type FluxSource } from './flux-files.js';
import { isSecret, planOverlay } from './overlay-plan.js';
import { releaseFiles } from './release-files.js';
import { renderRelease } from './render-release.js';
import { exportScope } from './places.js';
import { secretFields } from './secret-fields.js';
import { checkOut, writeExport, writeFiles } from './write-folder.js';

/** Releases rendered at a time: each runs several helm processes of its own. */
export const EXPORT_PARALLEL = 3;

export interface ExportOptions extends CommonOptions {
  out: string;
  force: boolean;
  timeout: string;
  /** `host[:port]/path` the export is pushed to; default `<registry>/<app>-export`. */
  ociRepository?: string;
  ociTag: string;
  ociInsecure: boolean;
  fluxNamespace: string;
  helmArgs: string[];
}

export async function exportRendered(o: ExportOptions, state: RunState, input: AppInput): Promise<number> {
  checkOut(o.out, o.force);
  checkOciRepository(o);
  const scope = exportScope(o, input);
  // The releases are independent here (no cluster, each its own renders): a few side by side.
  const outcomes: ReleaseOutcome[] = await mapBounded(scope.releases, EXPORT_PARALLEL, async ({ options, place, key }) => {
    const renders = await renderRelease(options, key ? memberState(state, key) : state, place);
    const plan = planOverlay(renders.vendor ?? [], renders.customer);
    refuseSecretsInClear(renders.release.folder, [...renders.customer, ...(renders.vendor ?? [])], state);
    return { release: renders.release, plan, vendorFailure: renders.vendorFailure };
  });
  const source = fluxSource(o, scope.app ?? outcomes[0]!.release.name);
  const files = exportFiles(outcomes, source);
  await writeExport(o.out, (temp) => writeFiles(temp, files));
  logExport(o, state, outcomes, files.size);
  return 0;
}

/** The export's own lines (each release's run logged its own): what was rewritten where, and the total. */
function logExport(o: ExportOptions, state: RunState, outcomes: ReleaseOutcome[], files: number): void {
  const logger = createLogger({ format: o.logFormat, level: o.logLevel, secrets: state.secrets, destination: 2 });
  for (const x of outcomes) {
    if (x.vendorFailure) logger.warn({ release: x.release.folder, cause: x.vendorFailure }, `${x.release.folder}: the chart does not render with the vendor's values alone: every object is in its overlay in full, base/ is empty`);
    if (x.release.imageRewrites.length > 0) logger.info({ release: x.release.folder, rewrites: x.release.imageRewrites }, `${x.release.folder}: ${x.release.imageRewrites.length} image reference(s) rewritten (listed in the export's README)`);
  }
  logger.info({ out: o.out, releases: outcomes.map((x) => x.release.folder), files }, `exported ${outcomes.length} release(s) to ${o.out}`);
}

function exportFiles(outcomes: ReleaseOutcome[], source: FluxSource): Map<string, string> {
  const files = new Map<string, string>();
  for (const x of outcomes) for (const [path, content] of releaseFiles(x.plan)) files.set(`${x.release.folder}/${path}`, content);
  const withSecrets = new Set(outcomes.filter((x) => x.plan.secrets.length > 0).map((x) => x.release.folder));
  for (const [path, content] of fluxFolder(outcomes.map((x) => x.release), source, withSecrets)) files.set(path, content);
  files.set('README.md', exportReadme(outcomes, source));
  return files;
}

/** A secret value in a ConfigMap, an env value, an annotation: named, exit 3, nothing written. */
function refuseSecretsInClear(folder: string, objects: Parameters<typeof secretFields>[0], state: RunState): void {
  const found = secretFields(objects.filter((x) => !isSecret(x)), state.secrets);
  const places = [...new Set(found.map((f) => `${folder}: ${f.kind}/${f.name} ${f.path}`))];
  if (places.length === 0) return;
  throw new InvalidInputError(`a secret value would be written in clear outside a Secret, at:\n${places.map((p) => `  ${p}`).join('\n')}`, {
    hint: 'Move the value into a Secret the chart references (e.g. an existingSecret value), or export nothing secret there; the export writes secret values only to <release>/secrets/.',
  });
}

/** Before any rendering: the OCIRepository needs an address. */
function checkOciRepository(o: ExportOptions): void {
  if (o.ociRepository || o.registry) return;
  throw new UsageError('export writes an OCIRepository and has no registry to point it at: --oci-repository (HELM_INSTALLER_OCI_REPOSITORY) is not set, nor --registry', {
    hint: 'Give --oci-repository host[:port]/path, or --registry (HELM_INSTALLER_REGISTRY) to default it to <registry>/<app>-export.',
  });
}

function fluxSource(o: ExportOptions, app: string): FluxSource {
  const repository = o.ociRepository ?? `${o.registry}/${app}-export`;
  return { name: app, repository, tag: o.ociTag, insecure: o.ociInsecure, namespace: o.fluxNamespace };
}
