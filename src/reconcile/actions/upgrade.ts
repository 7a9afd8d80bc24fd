// Action "install" / "upgrade": helm upgrade --install, watched while helm waits (progress at
// intervals; a stop when a pod cannot become ready), its failure mapped to its cause. On helm 4
// the release's own fields win over whoever changed them since (--force-conflicts): a field set
// by hand (`kubectl set image`) would otherwise make every later upgrade, and its rollback, fail
// on a server-side apply conflict. Install and upgrade are one helm call, so one file: only the
// stage's name and --take-ownership's first-install differ.
import { describeProblems, type Problem } from '../../cluster/wait-diagnosis.js';
import type { WaitWatch } from '../../cluster/wait-watch.js';
import { HelmOperationError } from '../../common/errors.js';
import { CRDS_BRIDGED_RELEASE_LABEL } from '../../crds/read-bridged.js';
import { adoption } from '../decide.js';
import type { ActionRun, Narration, Stoppable } from './action.js';

export interface UpgradePort extends Narration, Stoppable {
  takeOwnership: 'always' | 'first-install' | 'never';
  /** --fail-fast-after in ms (0: never). */
  failFastAfter: number;
  /** The release labels of this revision (the digests, a release plan's marks). */
  labels(): Promise<Record<string, string>>;
  /** helm upgrade --install with the run's plan (values, post-renderer, timeout); the revision it made. */
  upgradeInstall(
    r: { takeOwnership: boolean; labels: Record<string, string> },
    signal: AbortSignal,
  ): Promise<{ revision?: number }>;
  /** Reads the release's pods while helm waits (progress lines; onHopeless when one cannot become ready). */
  watch(o: { failFastMs: number; onHopeless: () => void }): WaitWatch;
  /** Helm's failure with what was not ready and why (read now, or the last seen while waiting). */
  withCauses(error: HelmOperationError, lastSeen: Problem[]): Promise<HelmOperationError>;
  /** The KOTS app slug on the records helm wrote (best effort). */
  annotateRecords(): Promise<void>;
}

/** The loop's `install` and `upgrade` steps; returns the revision helm made. */
export const upgradeRelease: ActionRun<'install' | 'upgrade', UpgradePort> = async (p, step) => {
  const { logger, release } = p;
  // The owners step (check-owners.ts) has refused another release's objects when this is true.
  const takeOwnership = adoption(step, p.takeOwnership) !== undefined;
  // A killed run between helm and the CRDs' last step leaves this label for the next run to see.
  const labels = { ...(await p.labels()), ...(step.crdsBridged ? { [CRDS_BRIDGED_RELEASE_LABEL]: 'true' } : {}) };
  p.stage(step.kind);
  logger.info({ release, action: step.kind, takeOwnership }, 'running helm upgrade --install');
  const failFast = new AbortController();
  const watch = p.watch({
    failFastMs: p.failFastAfter > 0 ? p.failFastAfter : Number.POSITIVE_INFINITY,
    onHopeless: () => failFast.abort(),
  });
  try {
    // Stopped too if another installer takes the Lease (this run stalled past its duration).
    const { revision } = await p.upgradeInstall(
      { takeOwnership, labels },
      AbortSignal.any([p.signal, p.leaseLost, failFast.signal]),
    );
    return { upgraded: { revision } };
  } catch (err) {
    if (p.leaseLost.aborted) throw p.leaseLost.reason;
    if (watch.failedFast) throw failedFastError(release, step.kind, watch.failedFast, p.failFastAfter);
    if (err instanceof HelmOperationError) throw await p.withCauses(err, watch.lastSeen);
    throw err;
  } finally {
    watch.stop();
    // Helm wrote records whatever the outcome (a failed revision, its rollback); not once the
    // Lease is another installer's, nor while the run is being stopped.
    if (!p.leaseLost.aborted && !p.signal.aborted) await p.annotateRecords();
  }
};

function failedFastError(release: string, action: string, problems: Problem[], boundMs: number): HelmOperationError {
  const first = problems[0]!;
  const seconds = Math.round(boundMs / 1000);
  const why =
    first.reason === 'FailedCreate'
      ? `the cluster refused to create the pods of ${first.object} for ${seconds}s (${first.refusal ?? 'refused'})`
      : first.reason === 'Unschedulable'
        ? `no node could take ${first.object} for ${seconds}s`
        : `${first.object} stayed ${first.reason} for ${seconds}s`;
  return new HelmOperationError(
    [
      `${action} of release ${release} failed fast: ${why}, which waiting does not fix`,
      ...describeProblems(problems),
      'helm was stopped and rolled the release back (a first install is removed).',
    ].join('\n'),
    { hint: failedFastHint(first) },
  );
}

function failedFastHint(first: Problem): string {
  const bound = '--fail-fast-after (HELM_INSTALLER_FAIL_FAST_AFTER) sets the bound.';
  if (first.wayOut) return `Take the way out above (the cluster's own words are beside it), then run again; ${bound}`;
  if (first.reason === 'CrashLoopBackOff')
    return 'Fix what makes the container exit (its last log lines are above), then run again.';
  return `Make the image available (push it to the registry, fix the name or the pull secret), then run again; ${bound}`;
}
