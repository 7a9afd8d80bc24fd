// Action "recover": a release a killed helm left pending-* blocks every later upgrade ("another
// operation is in progress"). Under the Lease no live installer is in the middle of it, so the
// pending revision is marked failed and rolled back (or, never deployed, uninstalled); the run
// then reads and decides again (see release-recovery.ts for the plan).
import type { ReleaseLease } from '../../cluster/release-lease.js';
import { planRecovery, recoverRelease } from '../release-recovery.js';
import type { Action } from '../decide.js';
import { annotateReleaseRecords } from './annotate-records.js';
import type { ClusterRun, InstallRun } from '../run-context.js';
import { recordOutcome } from '../../run/record.js';

export async function recoverStuckRelease(run: InstallRun, cluster: ClusterRun, lease: ReleaseLease, action: Extract<Action, { kind: 'recover' }>): Promise<void> {
  const signal = AbortSignal.any([run.signal, lease.lost]);
  // Helm's own history: the plan needs the superseded revisions the records leave out.
  const history = await run.helm.history(run.release, cluster.namespace, undefined, signal);
  const plan = planRecovery(history);
  if (plan.kind === 'none') return;
  run.stage(`recovering the release (${action.pendingStatus})`);
  await recoverRelease(plan, {
    release: run.release,
    namespace: cluster.namespace,
    records: cluster.records,
    helm: run.helm,
    logger: run.logger,
    timeout: run.o.timeout,
    historyMax: run.o.historyMax,
    signal,
    holder: lease.identity,
  });
  // The rollback wrote a record (an uninstall removed them all).
  if (signal.aborted) return;
  await annotateReleaseRecords(run, cluster);
  const how = plan.kind === 'rollback' ? `rolled back to revision ${plan.to}` : 'uninstalled (it had never been deployed)';
  const note = `release left ${action.pendingStatus} by a killed operation: ${how}`;
  recordOutcome(run.state, { reason: 'Recovered', release: run.release, namespace: cluster.namespace, note, chartVersion: run.chart.version, started: run.started });
}
