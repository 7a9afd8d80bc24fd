// Adding outcomes to the run's list (RunState.outcomes), masked as they are kept: whatever later
// writes them (an Event, a webhook body) never sees a secret.
import { ExitCode } from '../common/exit-codes.js';
import { toInstallerError } from './report.js';
import type { Progress, RunState } from './run-state.js';
import { outcomeType, type Outcome } from './outcome.js';

/** What a step knows of an outcome; its type, duration and masking are added here. */
export type OutcomeFacts = Omit<Outcome, 'type' | 'durationSeconds' | 'exitCode'> & {
  started: number;
  exitCode?: number;
};

export function recordOutcome(state: RunState, f: OutcomeFacts): Outcome {
  const mask = (t: string | undefined) => (t === undefined ? undefined : state.secrets.maskText(t));
  const outcome: Outcome = {
    reason: f.reason,
    type: outcomeType(f.reason),
    release: f.release,
    namespace: f.namespace,
    note: mask(f.note)!,
    ...(f.cause !== undefined && { cause: mask(f.cause) }),
    ...(f.chartVersion !== undefined && { chartVersion: f.chartVersion }),
    ...(f.revision !== undefined && { revision: f.revision }),
    durationSeconds: Math.round((Date.now() - f.started) / 100) / 10,
    exitCode: f.exitCode ?? ExitCode.ok,
  };
  state.outcomes?.push(outcome);
  return outcome;
}

/**
 * A failed run's outcome, from where it got to. Nothing is recorded before the release and its
 * namespace are known (bad options: nothing was asked of the cluster, so nothing is told), nor
 * twice for a release that has one already (a test failure is its own reason).
 */
export function recordFailure(state: RunState, error: unknown, progress: Progress, started: number): void {
  const e = toInstallerError(error);
  if (!progress.release || !progress.namespace || e.exitCode === ExitCode.usage) return;
  if (
    state.outcomes?.some(
      (o) => o.release === progress.release && o.namespace === progress.namespace && o.exitCode !== ExitCode.ok,
    )
  )
    return;
  recordOutcome(state, {
    reason: 'Failed',
    release: progress.release,
    namespace: progress.namespace,
    note: `failed (exit ${e.exitCode}) while ${progress.action}: ${e.message.split('\n')[0]}`,
    cause: e.message.split('\n')[0],
    chartVersion: progress.chartVersion,
    started,
    exitCode: e.exitCode,
  });
}
