// Act, under the Lease: the release is read again (no other installer changes it from now on),
// decided again, and the action carried out. A stuck release is recovered first and the state
// read and decided once more, as Flux's reconcile loop repeats until it is in sync or out of
// actions; the rollback may have brought back exactly what this run asks for.
import { clusterDiscovery } from '../cluster/capabilities.js';
import type { ReleaseLease } from '../cluster/release-lease.js';
import type { RevisionLabels } from '../cluster/release-secrets.js';
import type { ObjectDrift } from '../drift/detect-drift.js';
import type { ImmutableChange } from '../drift/immutable-changes.js';
import { InstallerError, ExitCode } from '../common/errors.js';
import { digestLabels } from './release-digest.js';
import { correctReleaseDrift, type CorrectionOutcome } from './actions/correct-drift.js';
import { recreateImmutable } from './actions/recreate-immutable.js';
import { recoverStuckRelease } from './actions/recover.js';
import { testRelease } from './actions/test-release.js';
import { upgradeRelease } from './actions/upgrade.js';
import { upgradeChartCrds } from './actions/upgrade-crds.js';
import { decide, everDeployed, lastGoodRevision, type Action, type ReleaseState } from './decide.js';
import type { InstallInputs } from './install-inputs.js';
import type { RunPlan } from '../run/run-plan.js';
import { readReleaseState, revisionManifest, sameRevisions, type StateReader } from './read-state.js';
import { reportCorrected, reportSkip, reportUpgraded, withDriftNamed } from './report.js';
import type { ClusterRun, InstallRun } from './run-context.js';

export interface UnderLease {
  run: InstallRun;
  cluster: ClusterRun;
  plan: RunPlan;
  lease: ReleaseLease;
  reader: StateReader;
  inputs: InstallInputs;
  /** The chart as this run renders it: drift in an object it no longer has is not drift. */
  manifests: string;
}

/** Recovery is followed by one more decision; a release still stuck after it is a fault. */
const MAX_ROUNDS = 3;

export async function actUnderLease(c: UnderLease, before: ReleaseState | undefined): Promise<number> {
  let known = before;
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    c.run.stage('reading release history');
    const state = await readUnderLease(c, known);
    const action = decide(state, c.run.o);
    if (action.kind !== 'recover') return perform(c, action, state);
    await recoverStuckRelease(c.run, c.cluster, c.lease, action);
    known = undefined;
  }
  throw new InstallerError(ExitCode.internal, `release ${c.run.release} is still pending after ${MAX_ROUNDS - 1} recoveries`, { hint: 'Run the installer again.' });
}

/**
 * The records again (a cheap list of labels). Unchanged since the read before the Lease: that
 * read's findings stand. A last revision that is not deployed is decided on helm's own history
 * (the superseded revisions the records leave out tell a failed upgrade from a failed install).
 */
async function readUnderLease(c: UnderLease, known: ReleaseState | undefined): Promise<ReleaseState> {
  const records = await c.cluster.records.current();
  if (known && sameRevisions(records, known.records)) return known;
  if (records.at(-1)?.status === 'deployed' || records.length === 0) return readReleaseState(c.reader, records);
  const history = await c.run.helm.history(c.run.release, c.cluster.namespace, undefined, AbortSignal.any([c.run.signal, c.lease.lost]));
  return { records: history.map((h): RevisionLabels => ({ revision: h.revision, status: h.status, labels: {} })) };
}

async function perform(c: UnderLease, action: Exclude<Action, { kind: 'recover' }>, state: ReleaseState): Promise<number> {
  switch (action.kind) {
    case 'skip':
      c.inputs.stop();
      return reportSkip(c.run, c.cluster, action, c.inputs.recorded());
    case 'correct-drift': {
      const outcome = await correctReleaseDrift(c.run, c.cluster, action);
      if (outcome.failed.length === 0) return reportCorrected(c.run, c.cluster, action.revision, outcome.corrected);
      // Not put back (an immutable field): helm's own upgrade is the next way; its failure names them.
      return upgrade(c, state, { kind: 'upgrade', status: 'drifted', reason: 'drift that could not be put back', drift: action.drift }, outcome.failed);
    }
    default:
      return upgrade(c, state, action);
  }
}

async function upgrade(
  c: UnderLease,
  state: ReleaseState,
  action: Extract<Action, { kind: 'install' | 'upgrade' }>,
  notPutBack: CorrectionOutcome['failed'] = [],
): Promise<number> {
  const ever = everDeployed(state.records);
  c.run.logger.info({ release: c.run.release, reason: action.reason }, `${ever ? 'upgrading' : 'installing'}: ${action.reason}`);
  const labels = { ...digestLabels(await c.inputs.digests()), ...c.run.member?.labels };
  // Helm never updates crds/ and cannot drop a stored version: the CRDs go first (--crds), and
  // their refusal changes nothing. Then what helm's upgrade would be refused on is recreated.
  const crds = await upgradeChartCrds(c.run, c.cluster, c.manifests, c.lease);
  const recreated = ever ? await recreateBeforeUpgrade(c, state) : [];
  let revision: number | undefined;
  try {
    revision = await upgradeRelease(c.run, c.cluster, c.plan, { everDeployed: ever, revisions: state.records.length, labels, lease: c.lease });
  } catch (error) {
    throw withDriftNamed(error, notPutBack);
  }
  await crds?.finish();
  // Only after helm changed the release: an unchanged redeploy and a drift correction test nothing.
  if (c.run.o.test) await testRelease(c.run, c.cluster, { revision, previous: lastGoodRevision(state.records), lease: c.lease });
  const drift = action.kind === 'upgrade' && action.drift.length > 0 ? action.drift : await driftNamed(c, state);
  return reportUpgraded(c.run, c.cluster, { everDeployed: ever, revision, drift, manifests: c.manifests, recreated });
}

/** Objects the upgrade would be refused on (a field that cannot change), recreated; against the last deployed revision. */
async function recreateBeforeUpgrade(c: UnderLease, state: ReleaseState): Promise<ImmutableChange[]> {
  const previous = lastGoodRevision(state.records);
  if (previous === undefined) return [];
  const previousManifest = await revisionManifest(c.cluster.kube, c.cluster.records, previous);
  // The run's discovery; read again if that read was given up (the cluster was not reachable before the Lease).
  const { resources } = await c.reader.discovery().catch(() => clusterDiscovery(c.cluster.kube.config));
  return recreateImmutable(c.run, c.cluster, { previousManifest, manifests: c.manifests, resources, lease: c.lease });
}

/** What the drift check found before the upgrade, when it ran beside it; the upgrade stands either way. */
async function driftNamed(c: UnderLease, state: ReleaseState): Promise<ObjectDrift[]> {
  try {
    return (await state.driftNamed) ?? [];
  } catch (error) {
    c.run.logger.warn({ cause: error instanceof Error ? error.message.split('\n')[0] : String(error) }, 'upgraded; what had drifted before it could not be read');
    return [];
  }
}
