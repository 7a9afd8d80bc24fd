// Action "test" (--test): `helm test` once an install or upgrade is ready, under the Lease, as
// Flux's `spec.test` does. A failed test, or one still running when --test-timeout runs out, is
// named with its pod's exit code and last log lines (as a failed wait is); the release is then
// rolled back to the revision deployed before (a first install is uninstalled), or kept
// (--test-failure keep), and the run ends with exit 4 and a TestFailed outcome.
import type { ReleaseLease } from '../../cluster/release-lease.js';
import { describeProblems, type Problem } from '../../cluster/wait-diagnosis.js';
import { HelmOperationError, InstallerError } from '../../common/errors.js';
import { recordOutcome } from '../../run/record.js';
import { annotateReleaseRecords } from './annotate-records.js';
import { diagnoseTests, TEST_TIMEOUT_REASON } from './test-diagnosis.js';
import type { ClusterRun, InstallRun } from '../run-context.js';

export interface TestRequest {
  /** The revision the upgrade made. */
  revision: number | undefined;
  /** The revision deployed before it: rolled back to on failure. None: a first install. */
  previous: number | undefined;
  lease: ReleaseLease;
}

export async function testRelease(run: InstallRun, cluster: ClusterRun, t: TestRequest): Promise<void> {
  const { o, logger, release, helm } = run;
  run.stage('test');
  const signal = AbortSignal.any([run.signal, t.lease.lost]);
  logger.info({ release, revision: t.revision, timeout: o.testTimeout }, 'running helm test');
  const result = await helm.test({ release, namespace: cluster.namespace, timeout: o.testTimeout }, { signal });
  if (!result.failure) {
    logger.info({ release, revision: t.revision, tests: result.runs.map((r) => r.name) }, `tests passed (${result.runs.length})`);
    return;
  }
  const problems = await diagnoseTests(run, cluster, result.runs);
  logger.error({ release, revision: t.revision, failed: describeProblems(problems), helm: result.failure }, 'tests failed');
  const timedOut = problems.some((p) => p.reason === TEST_TIMEOUT_REASON);
  const what = `helm test of release ${release} revision ${t.revision ?? '?'} ${timedOut ? `timed out (--test-timeout ${o.testTimeout})` : 'failed'}`;
  const told = (done: string) =>
    recordOutcome(run.state, {
      reason: 'TestFailed',
      release,
      namespace: cluster.namespace,
      note: testFailedNote(problems, done),
      cause: what,
      chartVersion: run.chart.version,
      revision: t.revision,
      started: run.started,
      exitCode: 4,
    });
  const done = await remediate(run, cluster, t, signal).catch((error: unknown) => {
    told(`undoing it failed: ${firstLine(error)}`);
    // Stopped by a signal or a lost Lease: that error (and its exit code) says what to do.
    throw signal.aborted ? error : remediationFailed(what, problems, error);
  });
  told(done);
  throw new HelmOperationError([`${what}; ${done}`, ...describeProblems(problems), `helm: ${result.failure}`].join('\n'), { hint: nextStep(o.testFailure, timedOut) });
}

/** Pure: the TestFailed outcome's one line: the first test that failed and what was done. */
export function testFailedNote(problems: Problem[], done: string): string {
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return `${first ? `test ${first.object} ${first.reason}: ${first.detail}${more}` : 'a test failed'}; ${done}`;
}

/** Rolls back, uninstalls or keeps; says which, for the summary and the outcome. */
async function remediate(run: InstallRun, cluster: ClusterRun, t: TestRequest, signal: AbortSignal): Promise<string> {
  const { o, helm, release, logger } = run;
  if (o.testFailure === 'keep') return `kept at revision ${t.revision ?? '?'} (--test-failure keep)`;
  const namespace = cluster.namespace;
  try {
    if (t.previous === undefined) {
      run.stage('uninstalling after failed tests');
      logger.warn({ release }, 'tests failed on a first install: uninstalling it');
      await helm.uninstall({ release, namespace, timeout: o.timeout }, { signal });
      return 'uninstalled (it was a first install)';
    }
    run.stage('rolling back after failed tests');
    logger.warn({ release, to: t.previous }, `tests failed: rolling back to revision ${t.previous}`);
    await helm.rollback({ release, namespace, revision: t.previous, timeout: o.timeout, historyMax: o.historyMax }, { signal });
    return `rolled back to revision ${t.previous}`;
  } finally {
    if (!signal.aborted) await annotateReleaseRecords(run, cluster);
  }
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

function remediationFailed(what: string, problems: Problem[], error: unknown): InstallerError {
  return new HelmOperationError([`${what}, and undoing it failed: ${firstLine(error)}`, ...describeProblems(problems)].join('\n'), {
    hint: 'Run the installer again: it recovers a release left pending, or upgrades it again and runs the tests again.',
    cause: error,
  });
}

function nextStep(action: 'rollback' | 'keep', timedOut: boolean): string {
  const fix = timedOut
    ? 'Find why the test did not finish (its pod is named above), or give the tests more time with --test-timeout (HELM_INSTALLER_TEST_TIMEOUT)'
    : "Fix what the test found (its pod's exit code and last log lines are above)";
  return action === 'keep'
    ? `${fix}; the release stays as upgraded (--test-failure keep), and an unchanged redeploy does not test it again: use --force-upgrade.`
    : `${fix}, then run again.`;
}
