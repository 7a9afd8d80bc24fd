// The app as one unit, pure. A vendor tests the charts of one app version together, so each run
// of a release plan is an app revision: which revision of each release it left deployed, and of
// which chart. When a release of a run fails (--app-rollback on-failure), every release of the
// plan that is not at its revision of the app's last good revision goes back to it, and one the
// last good revision did not have is uninstalled, dependents first. Comparing with where each
// release is, rather than with what this run did, also mends what an interrupted run left (a
// release upgraded before the run was killed is unchanged for the next run, yet not the app's).
// The inventory keeps the revisions (inventory.ts), so a later run knows the last good one.
import type { ReleaseOutcome } from './release-outcome.js';

interface AppRelease {
  /** `namespace/name`. */
  key: string;
  revision: number;
  /** `name-version` of the chart it was deployed from. */
  chart?: string;
  /**
   * The revision's input digest (its helm-installer/input-digest label: chart and values): a
   * helm rollback copies the labels of the revision it restores, so a release rolled back to this
   * one is recognised although its revision number is new.
   */
  digest?: string;
}

/**
 * Where a release is: its deployed revision and that revision's input digest, and whether it is
 * this app's (its newest record carries the app's release label). A release the plan lists but
 * someone else made (a plan edited to name it, a run that failed before reaching it) is no part of
 * the app: never rolled back, uninstalled or recorded.
 */
export type Deployed = Pick<AppRelease, 'revision' | 'digest'> & { ours?: boolean };

export type AppRevisionStatus = 'deployed' | 'rolled back' | 'rollback failed' | 'failed' | 'nothing changed';

export interface AppRevision {
  revision: number;
  status: AppRevisionStatus;
  /** ISO time the run ended. */
  at: string;
  /** What each release was left at: for a deployed revision, the app as tested together. */
  releases: AppRelease[];
  /** The app revision the cluster went back to (rolled back). */
  rolledBackTo?: number;
}

/** The inventory keeps this many app revisions: enough to find the last good one after a few failed runs. */
export const KEPT_REVISIONS = 10;

export type RollbackStep =
  { key: string; kind: 'rollback'; from: number; to: number } | { key: string; kind: 'uninstall'; from: number };

export function lastGood(revisions: readonly AppRevision[]): AppRevision | undefined {
  return [...revisions].reverse().find((r) => r.status === 'deployed');
}

export function nextRevision(revisions: readonly AppRevision[]): number {
  return Math.max(0, ...revisions.map((r) => r.revision)) + 1;
}

/**
 * What takes the app back to `good`: each release of the plan whose deployed revision (`current`;
 * absent: not installed) is not its revision at `good`, latest in the plan's order first
 * (dependents before what they depend on). A release `good` did not have is uninstalled; with no
 * good revision at all (a first app install), every installed one is. `order` is the current
 * plan: a release it no longer lists is not touched, nor one that is not this app's.
 */
export function rollbackSteps(
  order: readonly string[],
  current: ReadonlyMap<string, Deployed>,
  good: AppRevision | undefined,
): RollbackStep[] {
  const before = new Map((good?.releases ?? []).map((r) => [r.key, r]));
  const steps: RollbackStep[] = [];
  for (const key of [...order].reverse()) {
    const now = current.get(key);
    if (now === undefined || now.ours === false) continue;
    const then = before.get(key);
    if (then === undefined) steps.push({ key, kind: 'uninstall', from: now.revision });
    else if (!same(now, then)) steps.push({ key, kind: 'rollback', from: now.revision, to: then.revision });
  }
  return steps;
}

/** The same revision, or one helm restored from it (equal input digests). */
function same(now: Deployed, then: Deployed): boolean {
  return now.revision === then.revision || (now.digest !== undefined && now.digest === then.digest);
}

/** The revision this run made: where each release of the plan that is this app's is (`current`, in the plan's order), and the chart of those the run did. */
export function revisionOf(
  n: number,
  current: ReadonlyMap<string, Deployed>,
  outcomes: readonly ReleaseOutcome[],
  status: AppRevisionStatus,
  at: Date,
  rolledBackTo?: number,
): AppRevision {
  const chartOf = (key: string) => {
    const o = outcomes.find((x) => x.key === key);
    return o?.status === 'done' ? o.chart : undefined;
  };
  const releases = [...current]
    .filter(([, d]) => d.ours !== false)
    .map(([key, d]): AppRelease => {
      const chart = chartOf(key);
      return { key, revision: d.revision, ...(chart ? { chart } : {}), ...(d.digest ? { digest: d.digest } : {}) };
    });
  return {
    revision: n,
    status,
    at: at.toISOString(),
    releases,
    ...(rolledBackTo !== undefined ? { rolledBackTo } : {}),
  };
}

/** The history with this run's revision, the oldest dropped past KEPT_REVISIONS (the last good one always kept). */
export function withRevision(revisions: readonly AppRevision[], next: AppRevision): AppRevision[] {
  const all = [...revisions, next];
  const good = lastGood(all);
  const kept = all.slice(-KEPT_REVISIONS);
  return good && !kept.includes(good) ? [good, ...kept.slice(1)] : kept;
}
