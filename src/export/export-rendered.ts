// `export --format rendered`, the orchestrator: settle the releases, render each twice
// (render-release.ts), split each into base, overlay and secrets (overlay-split.ts), refuse a
// secret that would sit in clear, then write every file at once (write-folder.ts).
import type { CommonOptions } from '../options/config.js';
import { InvalidInputError } from '../common/errors.js';
import { createLogger } from '../common/logger.js';
import { mapBounded } from '../drift/detect-drift.js';
import type { AppInput } from '../inputs/app-input.js';
import { memberState } from '../releases/run-graph.js';
import type { RunState } from '../run/run-state.js';
import { baseReadme, exportReadme, overlayReadme, type ReleaseOutcome } from './export-readme.js';
import { exportTarget, type ExportTarget } from './export-target.js';
import { fluxFolder, type FluxSource } from './flux-files.js';
import { isSecret, isTestHook, splitOverlay } from './overlay-split.js';
import { releaseFiles } from './release-files.js';
import { renderRelease } from './render-release.js';
import { exportScope } from './places.js';
import { secretFields } from './secret-fields.js';
import { writeFiles } from './write-folder.js';
import { keptEncrypted, writeExportTo } from './write-export.js';

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
  /** What Flux reads the export from: an OCI artifact, or a branch of a git repository. */
  source: 'oci' | 'git';
  gitUrl?: string;
  gitBranch: string;
  /** The export's folder in the repository; default: --out's path in its work tree, else `.`. */
  gitPath?: string;
}

export async function exportRendered(o: ExportOptions, state: RunState, input: AppInput): Promise<number> {
  const target = exportTarget(o);
  const scope = exportScope(o, input);
  // The releases are independent here (no cluster, each its own renders): a few side by side.
  const outcomes: ReleaseOutcome[] = await mapBounded(
    scope.releases,
    EXPORT_PARALLEL,
    async ({ options, place, key }) => {
      const renders = await renderRelease(options, key ? memberState(state, key) : state, place);
      const plan = splitOverlay(renders.vendor ?? [], renders.customer);
      refuseSecretsInClear(renders.release.folder, [...renders.customer, ...(renders.vendor ?? [])], state);
      const vendor = { rewrites: renders.vendorRewrites ?? [], tests: (renders.vendor ?? []).filter(isTestHook) };
      return { release: renders.release, plan, vendorFailure: renders.vendorFailure, vendor };
    },
  );
  const source = fluxSource(o, scope.app ?? outcomes[0]!.release.name, target);
  const files = exportFiles(outcomes, source);
  // In a git work tree in place (its .git and other files stay); elsewhere a complete folder at once
  // when it holds nothing but an earlier export.
  const { kept } = await writeExportTo(o.out, { inTree: target.tree !== undefined, isSecret: isSecretPath }, (temp) =>
    writeFiles(temp, files, isSecretPath),
  );
  logExport(o, state, outcomes, { files: files.size, kept, warnings: target.warnings });
  return 0;
}

/** The export's own lines (each release's run logged its own): what was rewritten where, and the total. */
function logExport(
  o: ExportOptions,
  state: RunState,
  outcomes: ReleaseOutcome[],
  written: { files: number; kept: string[]; warnings: string[] },
): void {
  const { files, kept, warnings } = written;
  const logger = createLogger({ format: o.logFormat, level: o.logLevel, secrets: state.secrets, destination: 2 });
  for (const w of warnings) logger.warn({ out: o.out }, w);
  for (const path of kept) logger.warn({ file: path }, keptEncrypted(path));
  for (const x of outcomes) {
    if (x.vendorFailure)
      logger.warn(
        { release: x.release.folder, cause: x.vendorFailure },
        `${x.release.folder}: the chart does not render with the vendor's values alone: every object is in its overlay in full, base/ is empty`,
      );
    if (x.release.imageRewrites.length > 0)
      logger.info(
        { release: x.release.folder, rewrites: x.release.imageRewrites },
        `${x.release.folder}: ${x.release.imageRewrites.length} image reference(s) rewritten (listed in its base/README.md and overlay/README.md)`,
      );
  }
  logger.info(
    { out: o.out, releases: outcomes.map((x) => x.release.folder), files },
    `exported ${outcomes.length} release(s) to ${o.out}`,
  );
}

const isSecretPath = (path: string) => /\/secrets\/[^/]+$/.test(path);

function exportFiles(outcomes: ReleaseOutcome[], source: FluxSource): Map<string, string> {
  const files = new Map<string, string>();
  for (const x of outcomes) {
    for (const [path, content] of releaseFiles(x.plan)) files.set(`${x.release.folder}/${path}`, content);
    files.set(`${x.release.folder}/base/README.md`, baseReadme(x));
    files.set(`${x.release.folder}/overlay/README.md`, overlayReadme(x));
  }
  const withSecrets = new Set(outcomes.filter((x) => x.plan.secrets.length > 0).map((x) => x.release.folder));
  for (const [path, content] of fluxFolder(
    outcomes.map((x) => x.release),
    source,
    withSecrets,
  ))
    files.set(path, content);
  files.set('README.md', exportReadme(outcomes, source));
  return files;
}

/** A secret value in a ConfigMap, an env value, an annotation: named, exit 3, nothing written. */
function refuseSecretsInClear(folder: string, objects: Parameters<typeof secretFields>[0], state: RunState): void {
  const found = secretFields(
    objects.filter((x) => !isSecret(x)),
    state.secrets,
  );
  const places = [...new Set(found.map((f) => `${folder}: ${f.kind}/${f.name} ${f.path}`))];
  if (places.length === 0) return;
  throw new InvalidInputError(
    `a secret value would be written in clear outside a Secret, at:\n${places.map((p) => `  ${p}`).join('\n')}`,
    {
      hint: 'Move the value into a Secret the chart references (e.g. an existingSecret value), or export nothing secret there; the export writes secret values only to <release>/secrets/.',
    },
  );
}

function fluxSource(o: ExportOptions, app: string, target: ExportTarget): FluxSource {
  const common = { name: app, namespace: o.fluxNamespace };
  if (o.source === 'git')
    return { kind: 'GitRepository', ...common, url: o.gitUrl!, branch: o.gitBranch, path: target.gitPath };
  return {
    kind: 'OCIRepository',
    ...common,
    repository: o.ociRepository ?? `${o.registry}/${app}-export`,
    tag: o.ociTag,
    insecure: o.ociInsecure,
  };
}
