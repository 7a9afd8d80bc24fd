// The one context of a run, for every command (values, render, images, install, plan): the
// options, the logger and the secrets to mask, cancellation and the progress the failure summary
// reads, the chart, the value layers and the helm adapter, and the cluster's clients once
// connected. Every step takes it instead of a list of loose parameters. The run's temporary
// directory belongs to its plan (render-setup.ts): it lives exactly as long as the plan.
import { loadChart, type ChartInfo } from '../inputs/chart.js';
import { offPinWarning } from '../inputs/chart-dependencies.js';
import type { KubeClients } from '../cluster/kube-client.js';
import type { ReleaseRecords } from '../cluster/release-secrets.js';
import type { CommonOptions } from '../options/config.js';
import { createBaseContext, createHelmClient } from './base-context.js';
import type { HelmClient } from '../helm/helm-client.js';
import type { Logger } from 'pino';
import type { RunState } from './run-state.js';
import type { SecretRegistry } from '../common/secrets.js';
import { resolveValues, type ResolvedValues } from '../inputs/values.js';
import { stageGate } from './run-control.js';

export interface RunContext<O extends CommonOptions = CommonOptions> {
  o: O;
  state: RunState;
  signal: AbortSignal;
  /** Date.now() when the command started: the summary's seconds. */
  started: number;
  /** Enters a stage (refused once a signal arrived). */
  stage: (name: string) => void;
  logger: Logger;
  secrets: SecretRegistry;
  chart: ChartInfo;
  release: string;
  resolved: ResolvedValues;
  helm: HelmClient;
  /** Set when the run is one release of a release plan (src/releases/run-graph.ts). */
  member?: PlanMember;
}

/** A release installed as one of a release plan's: what the scheduler and the release share. */
export interface PlanMember {
  /** Awaited after the checks, before the Lease: the plan's order and its all-checks-first rule. */
  gate(): Promise<void>;
  /** Release labels that mark the release as the app's (helm --labels). */
  labels: Record<string, string>;
  /** What the release's summary said: filled by reconcile/report.ts. */
  outcome?: { action: string; revision?: number; chart?: string };
}

/** The cluster's clients, once connected, with the release's namespace and records. */
export interface ClusterRun {
  kube: KubeClients;
  namespace: string;
  records: ReleaseRecords;
}

/**
 * The stages every command runs first: logger, chart, value layers, helm. Logs go to stdout
 * (fd 1) for `install`, to stderr (fd 2) where stdout is data. `deferChartValues`: the chart's
 * values.yaml files are read by the plan (or any read of chart.defaultValues) instead.
 */
export async function startRun<O extends CommonOptions>(
  o: O,
  state: RunState,
  logTo: 1 | 2,
  options: { deferChartValues?: boolean } = {},
): Promise<RunContext<O>> {
  const started = Date.now();
  const { logger, secrets } = createBaseContext(o, logTo, state);
  state.progress.namespace = o.namespace;
  state.progress.action = 'reading the chart';
  const chart = await loadChart({ chart: o.chart, appDir: o.appDir }, { deferValues: options.deferChartValues });
  for (const d of chart.dependencies.filter((c) => c.offPin))
    logger.warn({ chart: d.chart, dependency: d.name, vendored: d.vendored, pinned: d.pinned }, offPinWarning(d));
  const release = o.release ?? chart.name;
  state.progress.release = release;
  state.progress.chartVersion = chart.version;
  state.progress.action = 'reading values';
  const resolved = resolveValues({ baseValues: o.baseValues, customerValues: o.values, sets: o.sets }, secrets);
  const helm = await createHelmClient(o, { logger, secrets });
  return {
    o,
    state,
    signal: state.signal,
    started,
    stage: stageGate(state),
    logger,
    secrets,
    chart,
    release,
    resolved,
    helm,
  };
}

export function chartLabel(run: Pick<RunContext, 'chart'>): string {
  return `${run.chart.name}-${run.chart.version}`;
}
