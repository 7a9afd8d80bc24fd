// `export --format helmrelease`, the orchestrator: settle the releases as the rendered form does
// (places.ts), gather each one's facts (helmrelease-facts.ts), hand them to the pure writer
// (helmrelease/), then write every file and each chart's archive at once (write-export.ts: a new
// folder whole; a git work tree, or a folder with the user's files, in place).
import { join } from 'node:path';
import type { CommonOptions } from '../options/config.js';
import type { IgnoreRule } from '../drift/ignore-rules.js';
import { UsageError } from '../common/errors.js';
import type { DriftMode } from '../reconcile/decide.js';
import type { TestFailureAction } from '../reconcile/install-options.js';
import { createLogger } from '../common/logger.js';
import type { AppInput } from '../inputs/app-input.js';
import { memberState } from '../releases/run-graph.js';
import type { RunState } from '../run/run-state.js';
import { mapBounded } from '../drift/detect-drift.js';
import { EXPORT_PARALLEL } from './export-rendered.js';
import { helmReleaseFacts, type HelmReleaseFacts } from './helmrelease-facts.js';
import { helmReleaseReadme } from './helmrelease-readme.js';
import { helmReleaseFiles } from './helmrelease/helmrelease-files.js';
import type { HelmReleaseFiles, HelmReleaseInput, HelmReleaseOptions } from './helmrelease/input.js';
import { releaseKey, releaseNames } from './helmrelease/names.js';
import { toYaml } from './helmrelease/yaml-text.js';
import { exportScope } from './places.js';
import { writeFiles } from './write-folder.js';
import { keptEncrypted, writeExportTo } from './write-export.js';
import { outTarget } from './export-target.js';

export interface HelmReleaseExportOptions extends CommonOptions {
  out: string;
  force: boolean;
  timeout: string;
  helmArgs: string[];
  ociInsecure: boolean;
  fluxNamespace: string;
  chartRepositoryPath: string;
  /** Install's own options, so the HelmRelease does what install would do with the same inputs. */
  historyMax: number;
  takeOwnership: HelmReleaseInput['takeOwnership'];
  crds: HelmReleaseInput['crds'];
  drift: DriftMode;
  driftIgnore: IgnoreRule[];
  driftIgnoreFile: IgnoreRule[];
  test: boolean;
  testTimeout: string;
  testFailure: TestFailureAction;
}

export async function exportHelmRelease(
  o: HelmReleaseExportOptions,
  state: RunState,
  input: AppInput,
): Promise<number> {
  const target = outTarget({ out: o.out, force: o.force, source: 'oci' });
  const options = writerOptions(o);
  const scope = exportScope(o, input);
  const facts: HelmReleaseFacts[] = await mapBounded(scope.releases, EXPORT_PARALLEL, ({ options: ro, place, key }) =>
    helmReleaseFacts(ro, key ? memberState(state, key) : state, place),
  );
  // The plan's dependsOn names folders (unique in the export); the writer takes releases.
  const byFolder = new Map(
    facts.map((f) => [f.release.folder, { release: f.release.name, namespace: f.release.namespace }]),
  );
  const inputs = facts.map((f) => helmReleaseInput(f, byFolder, o));
  const written = helmReleaseFiles(inputs, options);
  // Each release's folder as the writer named it: its chart archive goes there.
  const names = releaseNames(inputs);
  const releases = facts.map((f, i) => ({
    facts: f,
    key: releaseKey(inputs[i]!),
    folder: names.get(releaseKey(inputs[i]!))!.object,
  }));
  const files = exportFiles(written, releases, options);
  const isSecret = (path: string) => written.files.some((f) => f.secret && f.path === path);
  // In a git work tree in place, as the rendered form is (its .git and other files stay).
  const { kept } = await writeExportTo(o.out, { inTree: target.tree !== undefined, isSecret }, async (temp) => {
    writeFiles(temp, files, isSecret);
    for (const r of releases) await r.facts.packageChart(join(temp, r.folder, 'chart'));
  });
  logExport(o, state, written, { files: files.size, kept, warnings: target.warnings });
  return 0;
}

/** Before any rendering: the charts go to the customer's registry, and the form needs its address. */
function writerOptions(o: HelmReleaseExportOptions): HelmReleaseOptions {
  if (!o.registry) {
    throw new UsageError(
      'export --format helmrelease needs the registry the charts are pushed to: --registry (HELM_INSTALLER_REGISTRY) is not set',
      {
        hint: 'Give --registry host[:port][/namespace], the registry your cluster pulls from; the charts go to <registry>/<chart repository path>/<chart>.',
      },
    );
  }
  return {
    registry: { address: o.registry, chartPath: o.chartRepositoryPath, insecure: o.ociInsecure },
    namespace: o.fluxNamespace,
  };
}

/** One release as the writer takes it: the facts, and what install's options would do. */
function helmReleaseInput(
  f: HelmReleaseFacts,
  byFolder: Map<string, HelmReleaseInput['dependsOn'][number]>,
  o: HelmReleaseExportOptions,
): HelmReleaseInput {
  const r = f.release;
  return {
    release: r.name,
    namespace: r.namespace,
    chart: { name: r.chart.name, version: r.chart.version },
    dependsOn: r.dependsOn.map((d) => byFolder.get(d)!),
    timeout: r.timeout,
    historyMax: o.historyMax,
    takeOwnership: o.takeOwnership,
    crds: o.crds,
    values: f.values,
    secretPaths: f.secretPaths,
    drift: { mode: o.drift, ignore: [...o.driftIgnore, ...o.driftIgnoreFile] },
    test: { enabled: o.test, timeout: o.testTimeout, failure: o.testFailure },
    images: r.imageRewrites,
    ...(o.imagePullSecret ? { imagePullSecret: o.imagePullSecret } : {}),
    ...(o.appSlug ? { appSlug: o.appSlug } : {}),
  };
}

type PlacedFacts = { facts: HelmReleaseFacts; key: string; folder: string };

function exportFiles(
  written: HelmReleaseFiles,
  releases: PlacedFacts[],
  options: HelmReleaseOptions,
): Map<string, string> {
  const files = new Map(written.files.map((f) => [f.path, f.content]));
  // One `kubectl apply -k .` applies every release; Flux orders them by dependsOn.
  files.set(
    'kustomization.yaml',
    toYaml({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: releases.map((r) => r.folder),
    }),
  );
  files.set(
    'README.md',
    helmReleaseReadme(
      releases.map((r) => ({ folder: r.folder, release: r.facts.release, key: r.key })),
      written,
      options,
    ),
  );
  return files;
}

/** What the form cannot say goes to the log as warnings too, never only to a file. */
function logExport(
  o: HelmReleaseExportOptions,
  state: RunState,
  written: HelmReleaseFiles,
  done: { files: number; kept: string[]; warnings: string[] },
): void {
  const { files, kept, warnings } = done;
  const logger = createLogger({ format: o.logFormat, level: o.logLevel, secrets: state.secrets, destination: 2 });
  for (const w of warnings) logger.warn({ out: o.out }, w);
  for (const path of kept) logger.warn({ file: path }, keptEncrypted(path));
  for (const n of written.notes) logger.warn({ release: n.release }, `${n.release}: ${n.what}`);
  logger.info(
    { out: o.out, files, notes: written.notes.length },
    `exported ${files} file(s) and the charts to ${o.out} (HelmRelease form)`,
  );
}
