// Decide: the release state as read from the cluster in, one action out. Pure, so the whole
// table is unit-tested without a cluster (test/reconcile/decide.test.ts), after Flux's
// helm-controller (`DetermineReleaseState` -> `actionForState`). `decide` is the release's own
// table (what `plan` shows); `nextStep` is the loop's (act.ts): it also sees what this run's
// actions found (`SoFar`), so the upgrade path, test-then-remediate and a drift correction that
// left objects behind are decisions too, each taken one round at a time.
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
import type { Problem } from '../cluster/wait-diagnosis.js';
import type { CrdOutcome } from '../crds/upgrade-crds.js';
import type { ObjectDrift } from '../drift/detect-drift.js';
import type { ApiMapping } from '../drift/map-removed-apis.js';
import type { ImmutableChange } from '../drift/immutable-changes.js';
import type { OrphanedClaims } from '../drift/orphaned-claims.js';
import type { OwnershipVerdict } from '../drift/ownership.js';
import { isPending, type ReleaseStatus as HelmStatus } from '../helm/helm-results.js';

export type DriftMode = 'correct' | 'warn' | 'off';

/** What the last deployed revision's inputs are against this run's. */
export type InputsCompared = { equal: true } | { equal: false; reason: string };

export interface ReleaseState {
  /** The release's non-superseded revisions, oldest first (labels only). */
  records: RevisionLabels[];
  /** Read only when the last revision is deployed. */
  inputs?: InputsCompared;
  /** Unready workloads (`Kind/name: why`), and CRDs a killed run left mid-migration (crds/read-bridged.ts); read only when the inputs are equal. */
  unready?: string[];
  /** Drifted objects of the last deployed manifest; undefined when not read (--drift off, or an upgrade ahead). */
  drift?: ObjectDrift[];
  /** With an upgrade ahead: the drift check still running, to name what the upgrade put back. */
  driftNamed?: Promise<ObjectDrift[]>;
  /**
   * The records helm reads as the current release that name APIs the cluster no longer serves
   * (a cluster upgrade since), with what each becomes; the rest of the state is read as the
   * records will be once mapped.
   */
  removedApis?: RecordApis[];
}

/** One record's objects whose apiVersion the cluster no longer serves. */
export interface RecordApis {
  revision: number;
  mappings: ApiMapping[];
}

/** What mapping a record did: its mappings, and the Secret that keeps the original. */
export interface MappedRecord extends RecordApis {
  copy: string;
}

export type ReleaseStatus = 'absent' | 'pending' | 'failed' | 'out-of-date' | 'drifted' | 'unhealthy' | 'in-sync';

export type Action =
  | { kind: 'skip'; status: 'in-sync' | 'drifted'; revision: number; drift: ObjectDrift[] }
  | { kind: 'recover'; revision: number; pendingStatus: string }
  | { kind: 'correct-drift'; revision: number; drift: ObjectDrift[] }
  | ({ kind: 'install'; reason: string } & Bridging)
  | ({ kind: 'upgrade'; status: ReleaseStatus; reason: string; drift: ObjectDrift[] } & Bridging);

/** The loop's helm step, when this run's CRD step left intermediate CRDs: its revision says so (actions/upgrade.ts). */
type Bridging = { crdsBridged?: true };

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
      return {
        kind: 'upgrade',
        status,
        reason: s.inputs && !s.inputs.equal ? s.inputs.reason : 'inputs changed',
        drift,
      };
    default:
      break;
  }
  if (o.forceUpgrade) return { kind: 'upgrade', status, reason: '--force-upgrade', drift };
  if (status === 'drifted' && o.drift === 'correct') return { kind: 'correct-drift', revision: last!.revision, drift };
  if ((s.unready ?? []).length > 0)
    return { kind: 'upgrade', status: 'unhealthy', reason: `not healthy: ${s.unready!.join('; ')}`, drift };
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

// ---- The loop's decision: the release's state and what this run has done so far. ----
//
// | this run so far                            | next step                                        |
// | ------------------------------------------ | ------------------------------------------------ |
// | records name removed APIs, not mapped yet  | map-apis (before anything that runs helm)        |
// | nothing, or a recovery                     | decide(state) (the table above)                  |
// | pending again after 2 recoveries           | still-pending (exit 1)                           |
// | drift corrected, all of it                 | corrected (the summary)                          |
// | drift corrected, some not put back         | upgrade, reason "drift that could not be put back" |
// | upgrade of a deployed release, claims not checked | claims (against the last good revision)   |
// | helm will adopt (--take-ownership always, or first-install on an install), owners not read | owners (another release's object: exit 4, nothing changed) |
// | install or upgrade decided, CRDs not done  | crds                                             |
// | upgrade, CRDs done, not recreated          | recreate (against the last good revision)        |
// | CRDs and recreate done                     | install / upgrade (helm upgrade --install)       |
// | upgraded, CRDs held back                   | finish-crds                                      |
// | upgraded, --test, not tested               | test (the revision helm made)                    |
// | tests failed, --test-failure rollback      | remediate (rollback to the last good, or uninstall) |
// | tests failed, remediated or kept           | tests-failed (exit 4)                            |
// | upgraded (and tests passed)                | upgraded (the summary)                           |

/** Undoing a revision: back to an earlier one, or the whole release when none was ever deployed. */
export type Remedy = { how: 'rollback'; to: number } | { how: 'uninstall' };

export type NotPutBack = { drift: ObjectDrift; reason: string };

export type TestsFound =
  { passed: true; names: string[] } | { passed: false; problems: Problem[]; failure: string; timedOut: boolean };

/** What this run's actions found: the part of the state the cluster does not show. */
export interface SoFar {
  /** Stuck releases recovered (each followed by a fresh read). */
  recoveries: number;
  /** The records whose removed APIs were mapped (none: nothing to map was left). */
  mapped?: MappedRecord[];
  correction?: { revision: number; drift: ObjectDrift[]; corrected: ObjectDrift[]; notPutBack: NotPutBack[] };
  /** The CRD step ran; its outcome (none: the render has no CRD) is finished after helm. */
  crds?: { outcome: CrdOutcome | undefined; finished: boolean };
  recreated?: ImmutableChange[];
  /** The claims checked before anything changes: those the new version leaves behind (--orphaned-claims allow). */
  orphaned?: OrphanedClaims[];
  /** The owners of the objects helm would adopt were read (a refusal ends the run instead). */
  owners?: OwnershipVerdict;
  /** Helm's upgrade --install succeeded: the revision it made. */
  upgraded?: { revision: number | undefined };
  tests?: TestsFound;
  /** What undoing a tested revision did (a line for the summary), or how it failed. */
  remediation?: { done: string } | { failed: unknown };
}

type Goal = Extract<Action, { kind: 'install' | 'upgrade' }>;

export type Step =
  | Action
  | { kind: 'map-apis'; records: RecordApis[] }
  | { kind: 'claims'; previous: number }
  | { kind: 'owners'; goal: Goal; mode: Adoption }
  | { kind: 'crds'; goal: Goal }
  | { kind: 'recreate'; previous: number }
  | { kind: 'finish-crds'; crds: CrdOutcome }
  | { kind: 'test'; revision: number | undefined }
  | { kind: 'remediate'; revision: number | undefined; remedy: Remedy }
  // The ends: a summary, or a failure.
  | { kind: 'corrected'; revision: number; corrected: ObjectDrift[] }
  | {
      kind: 'upgraded';
      everDeployed: boolean;
      revision: number | undefined;
      drift: ObjectDrift[];
      recreated: ImmutableChange[];
    }
  | {
      kind: 'tests-failed';
      revision: number | undefined;
      tests: Extract<TestsFound, { passed: false }>;
      remediation: { done: string } | { failed: unknown };
    }
  | { kind: 'still-pending'; recoveries: number };

export interface LoopOptions extends DecideOptions {
  test: boolean;
  testFailure: 'rollback' | 'keep';
  takeOwnership: 'always' | 'first-install' | 'never';
}

/** How helm's --take-ownership adopts on this step: anything (`always`), or only what no release owns (a first install). */
export type Adoption = 'always' | 'first-install';

/** Pure: whether helm is given --take-ownership for this goal (actions/upgrade.ts passes it so). */
export function adoption(
  goal: { kind: 'install' | 'upgrade' },
  takeOwnership: LoopOptions['takeOwnership'],
): Adoption | undefined {
  if (takeOwnership === 'always') return 'always';
  return takeOwnership === 'first-install' && goal.kind === 'install' ? 'first-install' : undefined;
}

/** A release pending again after this many recoveries is a fault, not a stuck helm. */
const MAX_RECOVERIES = 2;

/** Pure: the next step for the release as read and what this run has done so far. */
export function nextStep(s: ReleaseState, so: SoFar, o: LoopOptions): Step {
  // Every helm step (a recovery's rollback too) builds the current record's objects first.
  const unmapped = (s.removedApis ?? []).filter((r) => !so.mapped?.some((m) => m.revision === r.revision));
  if (unmapped.length > 0) return { kind: 'map-apis', records: unmapped };
  const c = so.correction;
  if (c && c.notPutBack.length === 0) return { kind: 'corrected', revision: c.revision, corrected: c.corrected };
  // Some refused (an immutable field): helm's own upgrade is the next way; its failure names them.
  const goal: Action = c
    ? { kind: 'upgrade', status: 'drifted', reason: 'drift that could not be put back', drift: c.drift }
    : decide(s, o);
  if (goal.kind === 'recover' && so.recoveries >= MAX_RECOVERIES)
    return { kind: 'still-pending', recoveries: so.recoveries };
  if (goal.kind !== 'install' && goal.kind !== 'upgrade') return goal;
  if (so.upgraded) return afterUpgrade(s, so, goal, o);
  // Before any change (the CRDs are one): an object another release owns is refused first.
  const mode = adoption(goal, o.takeOwnership);
  if (mode && !so.owners) return { kind: 'owners', goal, mode };
  const previous = lastGoodRevision(s.records);
  if (goal.kind === 'upgrade' && previous !== undefined && !so.orphaned) return { kind: 'claims', previous };
  if (!so.crds) return { kind: 'crds', goal };
  if (goal.kind === 'upgrade' && previous !== undefined && !so.recreated) return { kind: 'recreate', previous };
  return so.crds.outcome?.bridged.length ? { ...goal, crdsBridged: true } : goal;
}

function afterUpgrade(s: ReleaseState, so: SoFar, goal: Goal, o: LoopOptions): Step {
  const revision = so.upgraded!.revision;
  if (so.crds?.outcome && !so.crds.finished) return { kind: 'finish-crds', crds: so.crds.outcome };
  // Only after helm changed the release: an unchanged redeploy and a drift correction test nothing.
  if (o.test && !so.tests) return { kind: 'test', revision };
  if (so.tests && !so.tests.passed) {
    const kept = { done: `kept at revision ${revision ?? '?'} (--test-failure keep)` };
    if (o.testFailure === 'keep' || so.remediation)
      return { kind: 'tests-failed', revision, tests: so.tests, remediation: so.remediation ?? kept };
    const previous = lastGoodRevision(s.records);
    return {
      kind: 'remediate',
      revision,
      remedy: previous === undefined ? { how: 'uninstall' } : { how: 'rollback', to: previous },
    };
  }
  const drift = goal.kind === 'upgrade' ? goal.drift : [];
  return { kind: 'upgraded', everDeployed: goal.kind === 'upgrade', revision, drift, recreated: so.recreated ?? [] };
}
