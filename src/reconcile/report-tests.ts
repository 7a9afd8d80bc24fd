// The end of a run whose tests failed (--test): the TestFailed outcome (a Warning Event, the
// webhook) and the exit-4 error, naming each test that did not succeed and what was done about
// it: rolled back, uninstalled, kept (--test-failure keep), or undoing it failed.
import { describeProblems, type Problem } from '../cluster/wait-diagnosis.js';
import { HelmOperationError, InstallerError } from '../common/errors.js';
import { recordOutcome } from '../run/record.js';
import { firstLine } from './actions/action.js';
import type { Step } from './decide.js';
import type { InstallRun } from './install-run.js';
import type { ClusterRun } from '../run/run-context.js';

type TestsFailed = Extract<Step, { kind: 'tests-failed' }>;

/** Records the outcome; returns the error the run ends with (`stopped`: a signal or a lost Lease, whose error says what to do). */
export function testsFailed(run: InstallRun, cluster: ClusterRun, step: TestsFailed, stopped: boolean): unknown {
  const { o, release } = run;
  const { problems, failure, timedOut } = step.tests;
  const what = `helm test of release ${release} revision ${step.revision ?? '?'} ${timedOut ? `timed out (--test-timeout ${o.testTimeout})` : 'failed'}`;
  const r = step.remediation;
  const done = 'done' in r ? r.done : `undoing it failed: ${firstLine(r.failed)}`;
  recordOutcome(run.state, {
    reason: 'TestFailed',
    release,
    namespace: cluster.namespace,
    note: testFailedNote(problems, done),
    cause: what,
    chartVersion: run.chart.version,
    revision: step.revision,
    started: run.started,
    exitCode: 4,
  });
  if ('failed' in r) return stopped ? r.failed : remediationFailed(what, problems, r.failed);
  return new HelmOperationError([`${what}; ${done}`, ...describeProblems(problems), `helm: ${failure}`].join('\n'), {
    hint: nextStep(o.testFailure, timedOut),
  });
}

/** Pure: the TestFailed outcome's one line: the first test that failed and what was done. */
export function testFailedNote(problems: Problem[], done: string): string {
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return `${first ? `test ${first.object} ${first.reason}: ${first.detail}${more}` : 'a test failed'}; ${done}`;
}

function remediationFailed(what: string, problems: Problem[], error: unknown): InstallerError {
  return new HelmOperationError(
    [`${what}, and undoing it failed: ${firstLine(error)}`, ...describeProblems(problems)].join('\n'),
    {
      hint: 'Run the installer again: it recovers a release left pending, or upgrades it again and runs the tests again.',
      cause: error,
    },
  );
}

function nextStep(action: 'rollback' | 'keep', timedOut: boolean): string {
  const fix = timedOut
    ? 'Find why the test did not finish (its pod is named above), or give the tests more time with --test-timeout (HELM_INSTALLER_TEST_TIMEOUT)'
    : "Fix what the test found (its pod's exit code and last log lines are above)";
  return action === 'keep'
    ? `${fix}; the release stays as upgraded (--test-failure keep), and an unchanged redeploy does not test it again: use --force-upgrade.`
    : `${fix}, then run again.`;
}
