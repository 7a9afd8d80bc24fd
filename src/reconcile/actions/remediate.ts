// Action "remediate": a revision undone, by rolling back to the last good one or, when none was
// ever deployed, uninstalling the release. One module for both causes: a release a killed helm
// left pending (recover.ts calls it once it has marked the revision failed) and a revision whose
// tests failed (the loop's `remediate` step). Only the words in the log differ.
import type { Remedy } from '../decide.js';
import { type ActionRun, type Narration } from './action.js';

export interface RemediatePort extends Narration {
  /** helm rollback to this revision (--force-conflicts on helm 4), stopped by a signal or a lost Lease. */
  rollback(to: number): Promise<void>;
  /** helm uninstall. */
  uninstall(): Promise<void>;
  /** The KOTS app slug on the records helm wrote (best effort, see annotate-records.ts). */
  annotateRecords(): Promise<void>;
  /** Stopped by a signal or a lost Lease: no more writes. */
  stopped(): boolean;
}

export type Cause = 'stuck' | 'tests';

/** Undoes it; returns what was done, as the summary and the outcome say it. */
export async function remediate(p: RemediatePort, remedy: Remedy, cause: Cause): Promise<string> {
  const { release, logger } = p;
  try {
    if (remedy.how === 'uninstall') {
      if (cause === 'tests') {
        p.stage('uninstalling after failed tests');
        logger.warn({ release }, 'tests failed on a first install: uninstalling it');
      }
      await p.uninstall();
      if (cause === 'stuck')
        logger.info({ release }, 'uninstalled the first install that never deployed; installing again');
      return cause === 'tests' ? 'uninstalled (it was a first install)' : 'uninstalled (it had never been deployed)';
    }
    if (cause === 'tests') {
      p.stage('rolling back after failed tests');
      logger.warn({ release, to: remedy.to }, `tests failed: rolling back to revision ${remedy.to}`);
    }
    await p.rollback(remedy.to);
    if (cause === 'stuck')
      logger.info(
        { release, revision: remedy.to },
        `rolled back to revision ${remedy.to}, the last deployed one; continuing`,
      );
    return `rolled back to revision ${remedy.to}`;
  } finally {
    // Helm wrote a record (an uninstall removed them all); not once the run is being stopped.
    if (!p.stopped()) await p.annotateRecords();
  }
}

/** The loop's step after failed tests: its failure is found too, for the summary to name. */
export const remediateTested: ActionRun<'remediate', RemediatePort> = async (p, step) => {
  try {
    return { remediation: { done: await remediate(p, step.remedy, 'tests') } };
  } catch (error) {
    return { remediation: { failed: error } };
  }
};
