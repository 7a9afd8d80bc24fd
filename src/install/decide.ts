// Decide: the release state as read from the cluster in, one action out. Pure, so the whole
// table is unit-tested without a cluster (test/unit/install-decide.test.ts), after Flux's
// helm-controller (`DetermineReleaseState` -> `actionForState`).
//
// | last revision         | inputs  | drift          | workloads | action                           |
// | --------------------- | ------- | -------------- | --------- | -------------------------------- |
// | none                  |         |                |           | install                          |
// | pending-* (stuck)     |         |                |           | recover, then decide again       |
// | failed, unknown       |         |                |           | upgrade (install if never deployed) |
// | deployed              | changed |                |           | upgrade (drift named, helm fixes it) |
// | deployed, --force-upgrade |     |                |           | upgrade                          |
// | deployed              | equal   | found, correct |           | correct drift                    |
// | deployed              | equal   | found, warn    | ready     | skip, drift named as a warning   |
// | deployed              | equal   | none, or warn  | not ready | upgrade (helm waits for them)    |
// | deployed              | equal   | none           | ready     | skip: in sync                    |
//
// "Held by a live installer" is the Lease's state, not the release's: every action but skip is
// taken under the Lease, which waits for (or, past --lock-timeout, names) the live holder, and
// the release is read and decided again once it is held.
import type { RevisionLabels } from '../cluster/release-secrets.js';
import type { ObjectDrift } from '../drift/detect-drift.js';
import { isPending, type ReleaseStatus as HelmStatus } from '../helm/helm-results.js';

export type DriftMode = 'correct' | 'warn' | 'off';

/** What the last deployed revision's inputs are against this run's. */
export type InputsCompared = { equal: true } | { equal: false; reason: string };

export interface ReleaseState {
  /** The release's non-superseded revisions, oldest first (labels only). */
  records: RevisionLabels[];
  /** Read only when the last revision is deployed. */
  inputs?: InputsCompared;
  /** Unready workloads (`Kind/name: why`); read only when the inputs are equal. */
  unready?: string[];
  /** Drifted objects of the last deployed manifest; undefined when not read (--drift off, or an upgrade ahead). */
  drift?: ObjectDrift[];
  /** With an upgrade ahead: the drift check still running, to name what the upgrade put back. */
  driftNamed?: Promise<ObjectDrift[]>;
}

export type ReleaseStatus = 'absent' | 'pending' | 'failed' | 'out-of-date' | 'drifted' | 'unhealthy' | 'in-sync';

export type Action =
  | { kind: 'skip'; status: 'in-sync' | 'drifted'; revision: number; drift: ObjectDrift[] }
  | { kind: 'recover'; revision: number; pendingStatus: string }
  | { kind: 'correct-drift'; revision: number; drift: ObjectDrift[] }
  | { kind: 'install'; reason: string }
  | { kind: 'upgrade'; status: ReleaseStatus; reason: string; drift: ObjectDrift[] };

export interface DecideOptions {
  drift: DriftMode;
  forceUpgrade: boolean;
}

/** Pure: the release's status, from the most to the least urgent thing the state shows. */
export function releaseStatus(s: ReleaseState): ReleaseStatus {
  const last = s.records.at(-1);
  if (!last) return 'absent';
  if (isPending(last.status as HelmStatus)) return 'pending';
  if (last.status !== 'deployed') return 'failed';
  if (!s.inputs?.equal) return 'out-of-date';
  if ((s.drift ?? []).length > 0) return 'drifted';
  if ((s.unready ?? []).length > 0) return 'unhealthy';
  return 'in-sync';
}

/** Pure: the one action for this state and these options. */
export function decide(s: ReleaseState, o: DecideOptions): Action {
  const status = releaseStatus(s);
  const last = s.records.at(-1);
  const drift = s.drift ?? [];
  switch (status) {
    case 'absent':
      return { kind: 'install', reason: 'no release yet' };
    case 'pending':
      return { kind: 'recover', revision: last!.revision, pendingStatus: last!.status };
    case 'failed':
      return everDeployed(s.records)
        ? { kind: 'upgrade', status, reason: `last revision ${last!.revision} is ${last!.status}`, drift: [] }
        : { kind: 'install', reason: `last revision ${last!.revision} is ${last!.status} and none was deployed` };
    case 'out-of-date':
      return { kind: 'upgrade', status, reason: s.inputs && !s.inputs.equal ? s.inputs.reason : 'inputs changed', drift };
    default:
      break;
  }
  if (o.forceUpgrade) return { kind: 'upgrade', status, reason: '--force-upgrade', drift };
  if (status === 'drifted' && o.drift === 'correct') return { kind: 'correct-drift', revision: last!.revision, drift };
  if ((s.unready ?? []).length > 0) return { kind: 'upgrade', status: 'unhealthy', reason: `not healthy: ${s.unready!.join('; ')}`, drift };
  return { kind: 'skip', status: status === 'drifted' ? 'drifted' : 'in-sync', revision: last!.revision, drift };
}

/** Pure: whether a revision of these records was deployed once (a failed upgrade, not a failed first install). */
export function everDeployed(records: { status: string }[]): boolean {
  return records.some((r) => r.status === 'deployed' || r.status === 'superseded');
}

/**
 * The revision to go back to when the new one fails its tests: the one deployed before, else the
 * newest superseded one (the last revision had failed). None: nothing was ever deployed.
 */
export function lastGoodRevision(records: { revision: number; status: string }[]): number | undefined {
  const good = (status: string) => records.filter((r) => r.status === status).map((r) => r.revision);
  const deployed = good('deployed');
  const candidates = deployed.length > 0 ? deployed : good('superseded');
  return candidates.length > 0 ? Math.max(...candidates) : undefined;
}
