// The one context of an install run: the command's start (logger, secrets, chart, values, helm),
// the run's state (cancellation, progress for the failure summary), the options, the cluster's
// clients once connected, and the plan once built. Every step takes it instead of a list of
// loose parameters.
import type { KubeClients } from '../cluster/kube-client.js';
import type { ReleaseRecords } from '../cluster/release-secrets.js';
import type { CommandStart } from '../command-start.js';
import type { IgnoreRule } from '../drift/ignore-rules.js';
import type { RunState } from '../run-state.js';
import type { InstallOptions } from './install-options.js';
import { stageGate } from './run-control.js';

export interface InstallRun extends CommandStart {
  o: InstallOptions;
  state: RunState;
  signal: AbortSignal;
  started: number;
  /** Enters a stage (refused once a signal arrived). */
  stage: (name: string) => void;
  /** The drift ignore rules, from --drift-ignore and --drift-ignore-file together. */
  ignore: IgnoreRule[];
}

export interface ClusterRun {
  kube: KubeClients;
  namespace: string;
  records: ReleaseRecords;
}

export function installRun(o: InstallOptions, state: RunState, start: CommandStart, started: number): InstallRun {
  return {
    ...start,
    o,
    state,
    signal: state.signal,
    started,
    stage: stageGate(state),
    ignore: [...o.driftIgnore, ...o.driftIgnoreFile],
  };
}

export function chartLabel(run: InstallRun): string {
  return `${run.chart.name}-${run.chart.version}`;
}
