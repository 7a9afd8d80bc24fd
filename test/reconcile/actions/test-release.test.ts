// helm test after an install or upgrade: passed, or each test that did not succeed found with why
// (timed out when one was still running); nothing undone here, the decision does that.
import { describe, expect, it } from 'vitest';
import type { Problem } from '../../../src/cluster/wait-diagnosis.js';
import type { TestRun } from '../../../src/helm/helm-results.js';
import { testRelease, type TestPort } from '../../../src/reconcile/actions/test-release.js';
import { narration, recorder, stoppable, type Recorder } from './fake-port.js';

function port(r: Recorder, result: { runs: TestRun[]; failure?: string }, problems: Problem[] = []): TestPort {
  return {
    ...narration(r),
    ...stoppable(),
    testTimeout: '5m',
    test: async () => r.call('helm test', result),
    diagnose: async (runs) =>
      r.call(
        'diagnose',
        problems,
        runs.map((x) => x.name),
      ),
  };
}

describe('test', () => {
  it('passed', async () => {
    const r = recorder();
    const found = await testRelease(port(r, { runs: [{ name: 'shop-test', phase: 'Succeeded' }] }), {
      kind: 'test',
      revision: 2,
    });
    expect(found).toEqual({ tests: { passed: true, names: ['shop-test'] } });
    expect(r.calls).toEqual(['stage test', 'info running helm test', 'helm test', 'info tests passed (1)']);
  });

  const exited: Problem = { object: 'Pod/shop-test', reason: 'Error', detail: 'container t exited 3' };
  const timedOut: Problem = {
    object: 'Pod/shop-slow',
    reason: 'TestTimeout',
    detail: 'still Running when --test-timeout 5m ran out',
  };
  const rows: [string, Problem[], boolean][] = [
    ['failed', [exited], false],
    ['still running at --test-timeout: timed out', [exited, timedOut], true],
  ];
  for (const [name, problems, isTimeout] of rows) {
    it(name, async () => {
      const r = recorder();
      const runs = [
        { name: 'shop-test', phase: 'Failed' },
        { name: 'shop-slow', phase: 'Running' },
      ];
      const found = await testRelease(port(r, { runs, failure: 'pod shop-test failed' }, problems), {
        kind: 'test',
        revision: 2,
      });
      expect(found).toEqual({
        tests: { passed: false, problems, failure: 'pod shop-test failed', timedOut: isTimeout },
      });
      expect(r.calls).toEqual([
        'stage test',
        'info running helm test',
        'helm test',
        'diagnose ["shop-test","shop-slow"]',
        'error tests failed',
      ]);
    });
  }
});
