// Action "test" (--test): `helm test` once an install or upgrade is ready, under the Lease, as
// Flux's `spec.test` does. A failed test, or one still running when --test-timeout runs out, is
// found with its pod's exit code and last log lines (test-diagnosis.ts, as a failed wait names
// them). What follows is the decision's (decide.ts): remediate (remediate.ts) unless
// --test-failure keep, then exit 4 with a TestFailed outcome (report-tests.ts).
import { describeProblems, type Problem } from '../../cluster/wait-diagnosis.js';
import type { TestRun } from '../../helm/helm-results.js';
import { stopSignal, type ActionRun, type Narration, type Stoppable } from './action.js';
import { TEST_TIMEOUT_REASON } from './test-diagnosis.js';

export interface TestPort extends Narration, Stoppable {
  testTimeout: string;
  /** helm test of the release (its last revision), for --test-timeout at most. */
  test(signal: AbortSignal): Promise<{ runs: TestRun[]; failure?: string }>;
  /** Why each test that did not succeed failed (a pod still running is deleted). */
  diagnose(runs: TestRun[]): Promise<Problem[]>;
}

export const testRelease: ActionRun<'test', TestPort> = async (p, step) => {
  const { logger, release } = p;
  p.stage('test');
  logger.info({ release, revision: step.revision, timeout: p.testTimeout }, 'running helm test');
  const result = await p.test(stopSignal(p));
  if (!result.failure) {
    const names = result.runs.map((r) => r.name);
    logger.info({ release, revision: step.revision, tests: names }, `tests passed (${result.runs.length})`);
    return { tests: { passed: true, names } };
  }
  const problems = await p.diagnose(result.runs);
  logger.error(
    { release, revision: step.revision, failed: describeProblems(problems), helm: result.failure },
    'tests failed',
  );
  const timedOut = problems.some((x) => x.reason === TEST_TIMEOUT_REASON);
  return { tests: { passed: false, problems, failure: result.failure, timedOut } };
};
