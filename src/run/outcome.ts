// What a run ended with, release by release: the one record that Events and notifications are
// written from (src/tell/). The install pipeline adds one per thing that happened to a release
// (a recovery, then the upgrade that followed it, is two); main.ts hands them to `tell` once the
// command has ended, success or failure. Pure data; its texts are masked before they are kept.

/** The Event reasons an admin filters on (src/tell/README.md). */
export type OutcomeReason =
  | 'Installed'
  | 'Upgraded'
  | 'Unchanged'
  | 'DriftCorrected'
  | 'DriftFound'
  | 'Recovered'
  | 'Failed'
  | 'TestFailed'
  | 'Suspended'
  /** A release of a failed app revision taken back to the last good one (a release plan's --app-rollback). */
  | 'RolledBack';

export interface Outcome {
  reason: OutcomeReason;
  /** Warning for a failure and for drift, as Kubernetes Events are typed. */
  type: 'Normal' | 'Warning';
  release: string;
  namespace: string;
  /** One line: what happened (the Event's note). */
  note: string;
  /** A failure's cause, as the summary gives it (first line of the error). */
  cause?: string;
  chartVersion?: string;
  revision?: number;
  durationSeconds: number;
  /** The run's exit code for this release (0 for a success). */
  exitCode: number;
}

const WARNING: ReadonlySet<OutcomeReason> = new Set([
  'DriftCorrected',
  'DriftFound',
  'Failed',
  'TestFailed',
  'RolledBack',
]);

export function outcomeType(reason: OutcomeReason): Outcome['type'] {
  return WARNING.has(reason) ? 'Warning' : 'Normal';
}
