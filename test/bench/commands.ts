// The installer's argv of every bench row, in one place: the bench modules run exactly these,
// and test/cli/bench-commands.test.ts runs each one on the built CLI against an unreachable
// cluster, so a row whose command the CLI stops accepting (an option renamed, a combination
// refused: exit 2) fails a test instead of a bench run minutes in. The bench itself is no test.
import { join } from 'node:path';
import { appDir } from '../helpers.js';

const customerValues = join(appDir, 'examples', 'customer-values.yaml');

/**
 * The bundled storefront chart alone with the customer's values. The app is a release plan
 * (app/releases.yaml), so a row that compares one chart with plain helm names the chart: a
 * `--release` against the default app is refused (exit 2).
 */
export const bundledChart = (): string[] => ['--chart', join(appDir, 'storefront'), '--values', customerValues];

/** A generated chart (the scale rows'), with no vendor values. */
export const generatedChart = (chart: string, noValues: string): string[] => [
  '--chart',
  chart,
  '--base-values',
  noValues,
];

export const benchArgv = {
  /** install-rows: start-up. */
  version: (): string[] => ['--version'],
  /** install-rows, plan-rows: an install, an unchanged redeploy or an upgrade of one chart as release `bench`. */
  install: (namespace: string, source: string[], extra: string[] = []): string[] => [
    'install',
    '--release',
    'bench',
    '--namespace',
    namespace,
    ...source,
    ...extra,
  ],
  /** plan-rows: the plan of a changed value (exit 10: changes). */
  plan: (namespace: string, source: string[], sets: string[]): string[] => [
    'plan',
    '--release',
    'bench',
    '--namespace',
    namespace,
    ...source,
    ...sets.flatMap((s) => ['--set', s]),
    '-o',
    'json',
  ],
  /** release-plan-rows: an app directory's whole plan. */
  releasePlan: (app: string, namespace: string): string[] => [
    'install',
    '--timeout',
    '120s',
    '--app-dir',
    app,
    '--namespace',
    namespace,
  ],
  /** release-plan-rows: one chart of that app installed alone. */
  releasePlanPart: (app: string, release: string, namespace: string): string[] => [
    'install',
    '--timeout',
    '120s',
    '--chart',
    join(app, 'part'),
    '--base-values',
    join(app, 'part', 'values.yaml'),
    '--release',
    release,
    '--namespace',
    namespace,
  ],
  /** export-rows: the bundled app's inputs, as install and export both take them. */
  appInputs: (customerFile: string, registry: string): string[] => [
    '--app-dir',
    appDir,
    '--values',
    customerFile,
    '--registry',
    `${registry}/acme`,
    '--image-path',
    'Promotion:spec.image',
  ],
  /** export-rows: the export of those inputs. */
  export: (out: string, inputs: string[]): string[] => ['export', '--out', out, ...inputs],
  /** export-rows: the same, for Flux to apply from an OCI repository. */
  exportForFlux: (
    out: string,
    inputs: string[],
    namespace: string,
    fluxNamespace: string,
    repository: string,
  ): string[] => [
    'export',
    '--out',
    out,
    ...inputs,
    '--namespace',
    namespace,
    '--flux-namespace',
    fluxNamespace,
    '--oci-repository',
    repository,
    '--oci-tag',
    'v1',
    '--oci-insecure',
  ],
  /** export-rows: our install of the same inputs. */
  appInstall: (namespace: string, inputs: string[]): string[] => [
    'install',
    '--namespace',
    namespace,
    '--skip-preflight',
    '--timeout',
    '180s',
    ...inputs,
  ],
  /** crd-rows: an upgrade of the CRD chart as release `crds`. */
  crdInstall: (chart: string, namespace: string, note: string, extra: string[] = []): string[] => [
    'install',
    '--chart',
    chart,
    '--release',
    'crds',
    '--namespace',
    namespace,
    '--set',
    `note=${note}`,
    ...extra,
  ],
};
