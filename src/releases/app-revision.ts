// The app as one unit, pure. A vendor tests the charts of one app version together, so each run
// of a release plan is an app revision: which revision of each release it left deployed, and of
// which chart. When a release of a run fails (--app-rollback on-failure), every release this run
// changed goes back to its revision at the app's last good revision, and one this run installed
// for the first time is uninstalled, dependents first; releases not started stay as they were.
// The inventory keeps the revisions (inventory.ts), so a later run knows the last good one.
import type { ReleaseOutcome } from './release-outcome.js';

export interface AppRelease {
  /** `namespace/name`. */
  key: string;
  revision: number;
  /** `name-version` of the chart it was deployed from. */
  chart?: string;
}

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
  | { key: string; kind: 'rollback'; from: number; to: number }
  | { key: string; kind: 'uninstall'; from: number };

export function lastGood(revisions: readonly AppRevision[]): AppRevision | undefined {
  return [...revisions].reverse().find((r) => r.status === 'deployed');
}

export function nextRevision(revisions: readonly AppRevision[]): number {
  return Math.max(0, ...revisions.map((r) => r.revision)) + 1;
}

/**
 * What takes the app back to `good`: each release this run installed or upgraded (it made a new
 * revision), latest in the plan's order first (dependents before what they depend on). A release
 * the last good revision did not have is uninstalled; with no good revision at all (a first app
 * install), all of them are. Failed releases were already rolled back or removed by helm itself.
 */
export function rollbackSteps(order: readonly string[], outcomes: readonly ReleaseOutcome[], good: AppRevision | undefined): RollbackStep[] {
  const before = new Map((good?.releases ?? []).map((r) => [r.key, r.revision]));
  const steps: RollbackStep[] = [];
  for (const key of [...order].reverse()) {
    const o = outcomes.find((x) => x.key === key);
    if (o?.status !== 'done' || !changedRelease(o.action) || o.revision === undefined) continue;
    const to = before.get(key);
    steps.push(to === undefined ? { key, kind: 'uninstall', from: o.revision } : { key, kind: 'rollback', from: o.revision, to });
  }
  return steps;
}

/** Actions that made a new revision of the release (an unchanged or drift-corrected one made none). */
function changedRelease(action: string): boolean {
  return action === 'installed' || action === 'upgraded';
}

/** The revision this run made, of the releases that are done (an app revision lists what is deployed). */
export function revisionOf(n: number, outcomes: readonly ReleaseOutcome[], status: AppRevisionStatus, at: Date, rolledBackTo?: number): AppRevision {
  const releases = outcomes.flatMap((o): AppRelease[] => (o.status === 'done' && o.revision !== undefined ? [{ key: o.key, revision: o.revision, ...(o.chart ? { chart: o.chart } : {}) }] : []));
  return { revision: n, status, at: at.toISOString(), releases, ...(rolledBackTo !== undefined ? { rolledBackTo } : {}) };
}

/** The history with this run's revision, the oldest dropped past KEPT_REVISIONS (the last good one always kept). */
export function withRevision(revisions: readonly AppRevision[], next: AppRevision): AppRevision[] {
  const all = [...revisions, next];
  const good = lastGood(all);
  const kept = all.slice(-KEPT_REVISIONS);
  return good && !kept.includes(good) ? [good, ...kept.slice(1)] : kept;
}
