// Act, under the Lease, as Flux's helm-controller reconciles (internal/reconcile): read the
// release, decide the next step (decide.ts, pure: the release's state and what this run has done
// so far), carry it out (one action per file in actions/, each through its narrow port), add what
// it found, and decide again, until a step ends the run (a summary or a failure) or the rounds run
// out. The release is read again only after a recovery, which changed it behind the decision;
// every other action's effect is what it found.
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { ObjectDrift } from '../drift/detect-drift.js';
import type { RevisionLabels } from '../cluster/release-secrets.js';
import { actionPorts, type Ports, type UnderLease } from './act-ports.js';
import type { Found } from './actions/action.js';
import { checkClaims } from './actions/check-claims.js';
import { checkOwners } from './actions/check-owners.js';
import { correctReleaseDrift } from './actions/correct-drift.js';
import { mapRemovedApis } from './actions/map-apis.js';
import { recoverRelease } from './actions/recover.js';
import { recreateImmutable } from './actions/recreate-immutable.js';
import { remediateTested } from './actions/remediate.js';
import { testRelease } from './actions/test-release.js';
import { applyChartCrds, finishChartCrds } from './actions/upgrade-crds.js';
import { upgradeRelease } from './actions/upgrade.js';
import { nextStep, type LoopOptions, type ReleaseState, type SoFar, type Step } from './decide.js';
import { readReleaseState, readRemovedApis, sameRevisions } from './read-state.js';
import { reportCorrected, reportSkip, reportUpgraded, withDriftNamed } from './report.js';
import { testsFailed } from './report-tests.js';

/** The steps that act; the others end the run. A new action is a row here and its kind in decide.ts's Step. */
export type Actions = { [K in Acting['kind']]: (port: Ports, step: Extract<Step, { kind: K }>) => Promise<Found> };

const ACTIONS: Actions = {
  'map-apis': mapRemovedApis,
  recover: recoverRelease,
  'correct-drift': correctReleaseDrift,
  claims: checkClaims,
  owners: checkOwners,
  crds: applyChartCrds,
  recreate: recreateImmutable,
  install: upgradeRelease,
  upgrade: upgradeRelease,
  'finish-crds': finishChartCrds,
  test: testRelease,
  remediate: remediateTested,
};

export type Ending = Extract<Step, { kind: 'skip' | 'corrected' | 'upgraded' | 'tests-failed' | 'still-pending' }>;
type Acting = Exclude<Step, Ending>;

/** More than any path takes (removed APIs mapped, two recoveries, a correction, owners, claims, CRDs, recreate, helm, CRDs again, test, remediate, the end). */
export const MAX_ROUNDS = 15;

export function actUnderLease(c: UnderLease, before: ReleaseState | undefined): Promise<number> {
  const loop: Loop = {
    read: (known) => readUnderLease(c, known),
    ports: actionPorts(c),
    actions: ACTIONS,
    options: c.run.o,
    end: (step, state, so) => end(c, step, state, so),
  };
  return reconcile(loop, before);
}

/** The loop's parts: the real ones above, fakes in test/reconcile/act.test.ts. */
export interface Loop {
  /** The release's state; `known` stands when its records have not changed since. */
  read(known: ReleaseState | undefined): Promise<ReleaseState>;
  ports: Ports;
  actions: Actions;
  options: LoopOptions;
  /** Writes the summary and returns the exit code, or throws the run's error. */
  end(step: Ending, state: ReleaseState, so: SoFar): Promise<number>;
}

export async function reconcile(l: Loop, before: ReleaseState | undefined): Promise<number> {
  let state = await l.read(before);
  let so: SoFar = { recoveries: 0 };
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const step = nextStep(state, so, l.options);
    if (!(step.kind in l.actions)) return l.end(step as Ending, state, so);
    const found = await act(l, step as Acting, so);
    so = { ...so, ...found };
    // A recovery changed the release behind the decision: read it again.
    if (step.kind === 'recover') {
      so.recoveries++;
      state = await l.read(undefined);
    }
  }
  throw new InstallerError(ExitCode.internal, `the release was not done after ${MAX_ROUNDS} steps`, {
    hint: 'Run the installer again.',
  });
}

async function act(l: Loop, step: Acting, so: SoFar): Promise<Found> {
  const run = l.actions[step.kind] as (port: Ports, step: Acting) => Promise<Found>;
  try {
    return await run(l.ports, step);
  } catch (error) {
    // Helm's upgrade after a drift correction that failed: its failure names what was not put back.
    throw step.kind === 'upgrade' ? withDriftNamed(error, so.correction?.notPutBack ?? []) : error;
  }
}

async function end(c: UnderLease, step: Ending, state: ReleaseState, so: SoFar): Promise<number> {
  const mapped = so.mapped ?? [];
  switch (step.kind) {
    case 'skip':
      c.inputs.stop();
      return reportSkip(c.run, c.cluster, step, c.inputs.recorded(), mapped);
    case 'corrected':
      return reportCorrected(c.run, c.cluster, step.revision, step.corrected, mapped);
    case 'upgraded': {
      const drift = step.drift.length > 0 ? step.drift : await driftNamed(c, state);
      return reportUpgraded(c.run, c.cluster, {
        everDeployed: step.everDeployed,
        revision: step.revision,
        drift,
        manifests: c.manifests,
        recreated: step.recreated,
        mapped,
      });
    }
    case 'tests-failed':
      throw testsFailed(c.run, c.cluster, step, c.run.signal.aborted || c.lease.lost.aborted);
    case 'still-pending':
      throw new InstallerError(
        ExitCode.internal,
        `release ${c.run.release} is still pending after ${step.recoveries} recoveries`,
        { hint: 'Run the installer again.' },
      );
  }
}

/**
 * The records again (a cheap list of labels). Unchanged since the read before the Lease: that
 * read's findings stand. A last revision that is not deployed is decided on helm's own history
 * (the superseded revisions the records leave out tell a failed upgrade from a failed install).
 */
async function readUnderLease(c: UnderLease, known: ReleaseState | undefined): Promise<ReleaseState> {
  c.run.stage('reading release history');
  const records = await c.cluster.records.current();
  if (known && sameRevisions(records, known.records)) return known;
  if (records.at(-1)?.status === 'deployed' || records.length === 0) return readReleaseState(c.reader, records);
  const [history, removed] = await Promise.all([
    c.run.helm.history(c.run.release, c.cluster.namespace, undefined, AbortSignal.any([c.run.signal, c.lease.lost])),
    // A stuck or failed record is built by helm too (the recovery's rollback, the upgrade).
    readRemovedApis(c.reader, records),
  ]);
  return {
    records: history.map((h): RevisionLabels => ({ revision: h.revision, status: h.status, labels: {} })),
    ...(removed.found.length > 0 ? { removedApis: removed.found } : {}),
  };
}

/** What the drift check found before the upgrade, when it ran beside it; the upgrade stands either way. */
async function driftNamed(c: UnderLease, state: ReleaseState): Promise<ObjectDrift[]> {
  try {
    return (await state.driftNamed) ?? [];
  } catch (error) {
    c.run.logger.warn(
      { cause: error instanceof Error ? error.message.split('\n')[0] : String(error) },
      'upgraded; what had drifted before it could not be read',
    );
    return [];
  }
}
