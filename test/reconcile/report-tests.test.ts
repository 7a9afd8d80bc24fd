// `install --test` (issue 22): the pure parts. helm test's status text as helm 4.1.4 and 3.17.2
// print it (captured from both against the local cluster), the options, the revision a failed
// test rolls back to, and why a test pod did not succeed.
import { describe, expect, it } from 'vitest';
import { installOptionTable } from '../../src/cli/commands/install-options.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { testArgs } from '../../src/helm/helm-args.js';
import { parseTestSuite } from '../../src/helm/helm-results.js';
import { testProblem } from '../../src/reconcile/actions/test-diagnosis.js';
import { testFailedNote } from '../../src/reconcile/report-tests.js';
import { lastGoodRevision } from '../../src/reconcile/decide.js';
import { resolveOptions, type GivenValue } from '../../src/options/options.js';
import { SecretRegistry } from '../../src/common/secrets.js';

const HELM4_FAILED = `NAME: r
LAST DEPLOYED: Wed Nov 25 09:39:31 2026
NAMESPACE: htexp4
STATUS: deployed
REVISION: 2
DESCRIPTION: Upgrade complete
TEST SUITE:     r-test
Last Started:   Wed Nov 25 09:39:37 2026
Last Completed: Wed Nov 25 09:39:37 2026
Phase:          Failed
`;

const HELM3_TWO = `NAME: r
LAST DEPLOYED: Wed Nov 25 09:39:44 2026
NAMESPACE: htexp3
STATUS: deployed
REVISION: 1
TEST SUITE:     r-test
Last Started:   Wed Nov 25 09:39:45 2026
Last Completed: Wed Nov 25 09:39:45 2026
Phase:          Succeeded
TEST SUITE:     r-test-db
Last Started:   Wed Nov 25 09:39:45 2026
Last Completed: Wed Nov 25 09:39:46 2026
Phase:          Failed
NOTES:
Phase: Running (the chart's own notes are not read)
`;

describe("helm test's status text", () => {
  it("each test hook and its phase, in order; the NOTES are the chart's text", () => {
    expect(parseTestSuite(HELM4_FAILED)).toEqual([{ name: 'r-test', phase: 'Failed' }]);
    expect(parseTestSuite(HELM3_TWO)).toEqual([
      { name: 'r-test', phase: 'Succeeded' },
      { name: 'r-test-db', phase: 'Failed' },
    ]);
  });

  it('a chart without tests: TEST SUITE: None', () => {
    expect(parseTestSuite('NAME: r\nREVISION: 4\nTEST SUITE: None\n')).toEqual([]);
    expect(parseTestSuite('')).toEqual([]);
  });

  it('argv', () => {
    expect(testArgs({ release: 'shop', namespace: 'prod', timeout: '5m' })).toEqual([
      'test',
      'shop',
      '--namespace',
      'prod',
      '--timeout',
      '5m',
    ]);
  });
});

describe('the --test options', () => {
  const resolve = (given: Record<string, GivenValue>, env: Record<string, string>) =>
    resolveOptions(installOptionTable, { given, env, ctx: { secrets: new SecretRegistry() } });

  it('off by default, 5m, rollback; from env or flag', () => {
    expect(resolve({}, {})).toMatchObject({ test: false, testTimeout: '5m', testFailure: 'rollback' });
    expect(
      resolve(
        {},
        { HELM_INSTALLER_TEST: 'true', HELM_INSTALLER_TEST_TIMEOUT: '90s', HELM_INSTALLER_TEST_FAILURE: 'keep' },
      ),
    ).toMatchObject({
      test: true,
      testTimeout: '90s',
      testFailure: 'keep',
    });
    expect(resolve({ test: true, testFailure: 'rollback' }, { HELM_INSTALLER_TEST_FAILURE: 'keep' })).toMatchObject({
      test: true,
      testFailure: 'rollback',
    });
  });

  it('a bad timeout or an unknown action: exit 2 naming the flag and the env var', () => {
    let error: unknown;
    try {
      resolve({ testFailure: 'ignore' }, { HELM_INSTALLER_TEST_TIMEOUT: 'soon', HELM_INSTALLER_TEST: 'maybe' });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ exitCode: ExitCode.usage });
    expect((error as Error).message.split('\n').sort()).toEqual(
      [
        'invalid HELM_INSTALLER_TEST="maybe" (env for --test): expected true or false (also accepted: 1/0, yes/no, on/off; empty is false)',
        'invalid HELM_INSTALLER_TEST_TIMEOUT="soon" (env for --test-timeout): expected a duration such as 300s, 10m or 1h30m',
        'invalid --test-failure "ignore" (or env HELM_INSTALLER_TEST_FAILURE): expected rollback or keep',
      ].sort(),
    );
    expect(() => resolve({ testTimeout: '0s' }, {})).toThrow(
      'invalid --test-timeout "0s" (or env HELM_INSTALLER_TEST_TIMEOUT): expected a duration above 0 and at most 24h',
    );
  });
});

describe('the revision a failed test goes back to', () => {
  it('the deployed one; else the newest superseded; none for a first install', () => {
    expect(lastGoodRevision([{ revision: 3, status: 'deployed' }])).toBe(3);
    expect(
      lastGoodRevision([
        { revision: 2, status: 'superseded' },
        { revision: 4, status: 'superseded' },
        { revision: 5, status: 'failed' },
      ]),
    ).toBe(4);
    expect(lastGoodRevision([{ revision: 1, status: 'failed' }])).toBeUndefined();
    expect(lastGoodRevision([])).toBeUndefined();
  });
});

describe('why a test pod did not succeed', () => {
  const pod = (phase: string, statuses: object[], name = 'shop-test') =>
    ({
      metadata: { name },
      spec: { restartPolicy: 'Never', containers: [{ name: 'check', image: 'x' }] },
      status: { phase, containerStatuses: statuses },
    }) as any;

  it('a failed container: its exit code and message', () => {
    const p = testProblem(
      pod('Failed', [
        { name: 'check', image: 'x', restartCount: 0, state: { terminated: { exitCode: 3, reason: 'Error' } } },
      ]),
      '5m',
    );
    expect(p).toEqual({
      object: 'Pod/shop-test',
      reason: 'Error',
      detail: 'container check exited 3',
      container: 'check',
    });
  });

  it('still running when the timeout ran out: TestTimeout, naming the timeout', () => {
    const running = pod('Running', [
      { name: 'check', image: 'x', ready: true, restartCount: 0, state: { running: {} } },
    ]);
    running.status.conditions = [{ type: 'Ready', status: 'True' }];
    expect(testProblem(running, '5s')).toEqual({
      object: 'Pod/shop-test',
      reason: 'TestTimeout',
      detail: 'still Running when --test-timeout 5s ran out',
      container: 'check',
    });
  });

  it('never started (an image pull): TestTimeout with the waiting reason', () => {
    const pulling = pod('Pending', [
      {
        name: 'check',
        image: 'r.example/t:1',
        restartCount: 0,
        state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } },
      },
    ]);
    expect(testProblem(pulling, '1m')).toEqual({
      object: 'Pod/shop-test',
      reason: 'TestTimeout',
      detail: 'still Pending (ImagePullBackOff: image r.example/t:1: not found) when --test-timeout 1m ran out',
      container: 'check',
    });
  });

  it('a pod that succeeded is no problem', () => {
    expect(
      testProblem(
        pod('Succeeded', [
          { name: 'check', image: 'x', restartCount: 0, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
        ]),
        '5m',
      ),
    ).toBeUndefined();
  });
});

describe("the TestFailed outcome's note", () => {
  it('names the first failed test pod, its exit code, how many more, and what was done', () => {
    const failed = { object: 'Pod/shop-test', reason: 'Error', detail: 'container check exited 3', container: 'check' };
    expect(testFailedNote([failed], 'rolled back to revision 1')).toBe(
      'test Pod/shop-test Error: container check exited 3; rolled back to revision 1',
    );
    const slow = {
      object: 'Pod/shop-test-db',
      reason: 'TestTimeout',
      detail: 'still Running when --test-timeout 5m ran out',
    };
    expect(testFailedNote([failed, slow], 'uninstalled (it was a first install)')).toBe(
      'test Pod/shop-test Error: container check exited 3 (and 1 more); uninstalled (it was a first install)',
    );
    expect(testFailedNote([], 'kept at revision 2 (--test-failure keep)')).toBe(
      'a test failed; kept at revision 2 (--test-failure keep)',
    );
  });
});
