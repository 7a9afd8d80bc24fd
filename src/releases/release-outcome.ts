// What happened to one release of a plan's run: the scheduler's result (run-graph.ts), what the
// app revision records (app-revision.ts) and what the summary says (plan-summary.ts).
import type { InstallerError } from '../common/errors.js';

export type ReleaseOutcome =
  | {
      key: string;
      status: 'done';
      action: string;
      revision?: number;
      chart?: string;
      seconds: number;
      /** What the release's run returned (0: done). */
      exitCode?: number;
    }
  | { key: string; status: 'failed'; error: InstallerError; seconds: number }
  | { key: string; status: 'not attempted'; because: string }
  | { key: string; status: 'pruned'; result: string }
  | { key: string; status: 'prune failed'; error: InstallerError };
