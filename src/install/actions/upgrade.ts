// Action "install" / "upgrade": helm upgrade --install, watched while helm waits (progress at
// intervals; a stop when a pod cannot become ready), its failure mapped to its cause. On helm 4
// the release's own fields win over whoever changed them since (--force-conflicts): a field set
// by hand (`kubectl set image`) would otherwise make every later upgrade, and its rollback, fail
// on a server-side apply conflict.
import { describeProblems, readProblems, watchWhileHelmWaits, type DiagnosisScope, type Problem } from '../../cluster/wait-diagnosis.js';
import type { ReleaseLease } from '../../cluster/release-lease.js';
import { HelmOperationError } from '../../common/errors.js';
import { annotateReleaseRecords } from './annotate-records.js';
import type { ClusterRun, InstallRun } from '../run-context.js';
import type { RunPlan } from '../../run/run-plan.js';

export interface UpgradeRequest {
  everDeployed: boolean;
  revisions: number;
  labels: Record<string, string>;
  lease: ReleaseLease;
}

/** Runs helm upgrade --install; returns the revision helm made. */
export async function upgradeRelease(run: InstallRun, cluster: ClusterRun, plan: RunPlan, p: UpgradeRequest): Promise<number | undefined> {
  const { o, logger, release, helm } = run;
  const takeOwnership = o.takeOwnership === 'always' || (o.takeOwnership === 'first-install' && !p.everDeployed);
  run.stage(p.everDeployed ? 'upgrade' : 'install');
  const action = run.state.progress.action;
  logger.info({ release, action, takeOwnership, revisions: p.revisions }, 'running helm upgrade --install');
  const failFast = new AbortController();
  const scope = { kube: cluster.kube, namespace: cluster.namespace, release, since: run.started };
  const watch = watchWhileHelmWaits(scope, {
    intervalMs: o.progressInterval,
    failFastMs: o.failFastAfter > 0 ? o.failFastAfter : Number.POSITIVE_INFINITY,
    logger,
    onHopeless: () => failFast.abort(),
  });
  try {
    const { revision } = await helm.upgradeInstall(
      { ...plan.upgradeArguments(cluster.namespace), takeOwnership, labels: p.labels, dryRun: false },
      // Stopped too if another installer takes the Lease (this run stalled past its duration).
      { signal: AbortSignal.any([run.signal, p.lease.lost, failFast.signal]), env: plan.airgap.env },
    );
    return revision;
  } catch (err) {
    if (p.lease.lost.aborted) throw p.lease.lost.reason;
    if (watch.failedFast) throw failedFastError(release, action, watch.failedFast, o.failFastAfter);
    if (err instanceof HelmOperationError) throw await withCauses(err, scope, watch.lastSeen);
    throw err;
  } finally {
    watch.stop();
    // Helm wrote records whatever the outcome (a failed revision, its rollback); not once the
    // Lease is another installer's, nor while the run is being stopped.
    if (!p.lease.lost.aborted && !run.signal.aborted) await annotateReleaseRecords(run, cluster);
  }
}

function failedFastError(release: string, action: string, problems: Problem[], boundMs: number): HelmOperationError {
  const first = problems[0]!;
  return new HelmOperationError(
    [
      `${action} of release ${release} failed fast: ${first.object} stayed ${first.reason} for ${Math.round(boundMs / 1000)}s, which waiting does not fix`,
      ...describeProblems(problems),
      'helm was stopped and rolled the release back (a first install is removed).',
    ].join('\n'),
    {
      hint:
        first.reason === 'CrashLoopBackOff'
          ? 'Fix what makes the container exit (its last log lines are above), then run again.'
          : 'Make the image available (push it to the registry, fix the name or the pull secret), then run again; --fail-fast-after (HELM_INSTALLER_FAIL_FAST_AFTER) sets the bound.',
    },
  );
}

/** Helm's failure plus what was not ready and why (read now, or the last seen while waiting). */
async function withCauses(err: HelmOperationError, scope: DiagnosisScope, lastSeen: Problem[]): Promise<HelmOperationError> {
  const now = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
  const problems = now.length > 0 ? now : lastSeen;
  if (problems.length === 0) return err;
  const [first = '', ...rest] = err.message.split('\n');
  return new HelmOperationError([first, 'not ready:', ...describeProblems(problems).map((l) => `  ${l}`), ...rest].join('\n'), { hint: err.hint, cause: err });
}
