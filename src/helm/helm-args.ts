// Pure argv builders for every helm command we run, one per operation; where helm 3 and 4
// differ they take the flags from the helm's traits (helm-traits.ts).
import type { HelmTraits } from './helm-traits.js';

export type SetKind = 'set' | 'set-string' | 'set-json';
export interface SetArgument {
  kind: SetKind;
  expression: string;
}

/** The user-supplied values, in helm's own layering order: files first, then --set*. */
export interface ValuesArguments {
  files: string[];
  sets: SetArgument[];
}

export interface UpgradeArguments {
  release: string;
  chart: string;
  namespace?: string;
  values: ValuesArguments;
  timeout: string;
  historyMax: number;
  dryRun: boolean;
  takeOwnership: boolean;
  postRendererArgs: string[];
  extraArgs: string[];
  /** Release labels helm keeps with the revision (`--labels`, helm 3.13+ and 4). */
  labels?: Record<string, string>;
}

function valuesArgs(values: ValuesArguments): string[] {
  return [...values.files.flatMap((f) => ['-f', f]), ...values.sets.flatMap((s) => [`--${s.kind}`, s.expression])];
}

function namespaceArgs(namespace?: string): string[] {
  return namespace ? ['--namespace', namespace] : [];
}

export function upgradeInstallArgs(a: UpgradeArguments, helm: HelmTraits): string[] {
  return [
    'upgrade',
    '--install',
    a.release,
    a.chart,
    ...namespaceArgs(a.namespace),
    '--create-namespace',
    ...helm.rollbackOnFailureArgs,
    '--timeout',
    a.timeout,
    '--history-max',
    String(a.historyMax),
    // The values given are the whole truth: without this, an upgrade given no values at all
    // (empty layers) silently reuses the last release's, and a value the admin removed stays.
    '--reset-values',
    ...(a.takeOwnership ? ['--take-ownership'] : []),
    ...helm.applyArgs,
    ...(a.dryRun ? ['--dry-run=server'] : []),
    ...labelsArgs(a.labels),
    ...valuesArgs(a.values),
    ...a.postRendererArgs,
    ...a.extraArgs,
  ];
}

export interface TemplateArguments {
  release: string;
  chart: string;
  namespace?: string;
  values: ValuesArguments;
  postRendererArgs: string[];
  /** Also print crds/ (render and images show everything helm would install). */
  includeCrds?: boolean;
}

/** `renderFlags`: what shapes the render like the target cluster (see render-flags.ts, capabilities-args). */
export function templateArgs(a: TemplateArguments, renderFlags: string[] = []): string[] {
  return [
    'template',
    a.release,
    a.chart,
    ...namespaceArgs(a.namespace),
    ...(a.includeCrds ? ['--include-crds'] : []),
    ...renderFlags,
    ...valuesArgs(a.values),
    ...a.postRendererArgs,
  ];
}

/**
 * Renders a probe chart whose only template is `{{ toJson .Values }}`. With no chart defaults,
 * .Values is exactly helm's merge of the user-supplied layers (nulls kept). Unlike
 * `install --dry-run=client -o json`, this needs no cluster on helm 3 either.
 */
export function mergedValuesArgs(release: string, probeChart: string, values: ValuesArguments): string[] {
  return ['template', release, probeChart, ...valuesArgs(values)];
}

/** `helm package`: the chart directory as `<destination>/<name>-<version>.tgz`. */
export function packageArgs(chart: string, destination: string): string[] {
  return ['package', chart, '--destination', destination];
}

export function historyArgs(release: string, namespace: string | undefined, max?: number): string[] {
  return ['history', release, ...namespaceArgs(namespace), ...(max ? ['--max', String(max)] : []), '-o', 'json'];
}

export function labelsArgs(labels?: Record<string, string>): string[] {
  const entries = Object.entries(labels ?? {});
  return entries.length ? ['--labels', entries.map(([k, v]) => `${k}=${v}`).join(',')] : [];
}

/** A cluster's Capabilities as `helm template` flags (see cluster/capabilities.ts). */
export interface RenderCapabilities {
  /** The API server's gitVersion, e.g. v1.34.4. */
  kubeVersion: string;
  /** Every group/version and group/version/Kind the API server serves, as helm upgrade lists them. */
  apiVersions: string[];
}

/**
 * `--kube-version` and `--api-versions` for a render that must see what `helm upgrade` sees.
 * The list is split over several flags: Linux caps one argument at 128 KiB, and a cluster with
 * many CRDs serves thousands of kinds.
 */
export function capabilitiesArgs(c: RenderCapabilities, maxChars = 60_000): string[] {
  const args = [`--kube-version=${c.kubeVersion}`];
  let chunk: string[] = [];
  let size = 0;
  for (const v of c.apiVersions) {
    if (chunk.length > 0 && size + v.length + 1 > maxChars) {
      args.push(`--api-versions=${chunk.join(',')}`);
      chunk = [];
      size = 0;
    }
    chunk.push(v);
    size += v.length + 1;
  }
  if (chunk.length > 0) args.push(`--api-versions=${chunk.join(',')}`);
  return args;
}

export interface RollbackArguments {
  release: string;
  namespace?: string;
  revision: number;
  timeout: string;
  historyMax: number;
}

/** Back to a known-good revision, waiting for it like an upgrade does. */
export function rollbackArgs(a: RollbackArguments, helm: HelmTraits): string[] {
  return [
    'rollback',
    a.release,
    String(a.revision),
    ...namespaceArgs(a.namespace),
    ...helm.waitArgs,
    ...helm.applyArgs,
    '--timeout',
    a.timeout,
    '--history-max',
    String(a.historyMax),
  ];
}

export interface TestArguments {
  release: string;
  namespace?: string;
  timeout: string;
}

/** The release's test hooks (`helm.sh/hook: test`), each waited for up to the timeout. */
export function testArgs(a: TestArguments): string[] {
  return ['test', a.release, ...namespaceArgs(a.namespace), '--timeout', a.timeout];
}

export interface UninstallArguments {
  release: string;
  namespace?: string;
  timeout: string;
}

/** Removes a first install that never deployed, waiting until its objects are gone. */
export function uninstallArgs(a: UninstallArguments, helm: HelmTraits): string[] {
  return ['uninstall', a.release, ...namespaceArgs(a.namespace), ...helm.waitArgs, '--timeout', a.timeout];
}

/**
 * Helm's client-side rate limit for the commands that write and wait (upgrade, rollback,
 * uninstall), when the environment sets none: helm's default is client-go's 5 requests a second
 * (HELM_QPS 0) after a burst of 100, so a release of a few hundred objects spends minutes waiting
 * on its own client (1000 Deployments: all available after 24 s, helm still waiting at 720 s).
 * 50 a second after a burst of 300 are what Flux's helm-controller uses; the API server's own
 * priority and fairness still protects it. HELM_QPS / HELM_BURST_LIMIT in the environment win,
 * and so does a --qps or --burst-limit after `--` (it comes later on helm's command line).
 */
const CLIENT_RATE = { qps: '50', burst: '300' } as const;

export function clientRateArgs(env: Record<string, string | undefined>): string[] {
  return [
    ...(env.HELM_QPS ? [] : ['--qps', CLIENT_RATE.qps]),
    ...(env.HELM_BURST_LIMIT ? [] : ['--burst-limit', CLIENT_RATE.burst]),
  ];
}
