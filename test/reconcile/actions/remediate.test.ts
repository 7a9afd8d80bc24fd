// The one remediation (rollback or uninstall), for a stuck release and for failed tests: the exact
// helm calls and log lines for each, what it says it did, and its failure found, not thrown.
import { describe, expect, it } from 'vitest';
import type { Remedy } from '../../../src/reconcile/decide.js';
import {
  remediate,
  remediateTested,
  type Cause,
  type RemediatePort,
} from '../../../src/reconcile/actions/remediate.js';
import { narration, recorder, type Recorder } from './fake-port.js';

function port(r: Recorder, o: { fail?: Error; stopped?: boolean } = {}): RemediatePort {
  const helm = (name: string, ...args: unknown[]) => {
    r.call(name, undefined, ...args);
    return o.fail ? Promise.reject(o.fail) : Promise.resolve();
  };
  return {
    ...narration(r),
    rollback: (to) => helm('helm rollback', to),
    uninstall: () => helm('helm uninstall'),
    annotateRecords: async () => r.call('annotate records', undefined),
    stopped: () => o.stopped ?? false,
  };
}

describe('remediate', () => {
  const rows: [Cause, Remedy, string[], string][] = [
    [
      'tests',
      { how: 'rollback', to: 2 },
      [
        'stage rolling back after failed tests',
        'warn tests failed: rolling back to revision 2',
        'helm rollback 2',
        'annotate records',
      ],
      'rolled back to revision 2',
    ],
    [
      'tests',
      { how: 'uninstall' },
      [
        'stage uninstalling after failed tests',
        'warn tests failed on a first install: uninstalling it',
        'helm uninstall',
        'annotate records',
      ],
      'uninstalled (it was a first install)',
    ],
    [
      'stuck',
      { how: 'rollback', to: 4 },
      ['helm rollback 4', 'info rolled back to revision 4, the last deployed one; continuing', 'annotate records'],
      'rolled back to revision 4',
    ],
    [
      'stuck',
      { how: 'uninstall' },
      [
        'helm uninstall',
        'info uninstalled the first install that never deployed; installing again',
        'annotate records',
      ],
      'uninstalled (it had never been deployed)',
    ],
  ];
  for (const [cause, remedy, calls, done] of rows) {
    it(`${cause}: ${remedy.how}`, async () => {
      const r = recorder();
      expect(await remediate(port(r), remedy, cause)).toBe(done);
      expect(r.calls).toEqual(calls);
    });
  }

  it('annotates the records helm wrote even when helm failed, but not once stopped', async () => {
    const failed = recorder();
    await expect(
      remediate(port(failed, { fail: new Error('rollback failed') }), { how: 'rollback', to: 2 }, 'stuck'),
    ).rejects.toThrow('rollback failed');
    expect(failed.calls).toEqual(['helm rollback 2', 'annotate records']);
    const stopped = recorder();
    await expect(
      remediate(port(stopped, { fail: new Error('killed'), stopped: true }), { how: 'uninstall' }, 'stuck'),
    ).rejects.toThrow('killed');
    expect(stopped.calls).toEqual(['helm uninstall']);
  });

  it("the loop's step after failed tests finds what was done, or the failure", async () => {
    const r = recorder();
    expect(
      await remediateTested(port(r), { kind: 'remediate', revision: 3, remedy: { how: 'rollback', to: 2 } }),
    ).toEqual({ remediation: { done: 'rolled back to revision 2' } });
    const error = new Error('helm rollback failed: timed out');
    expect(
      await remediateTested(port(recorder(), { fail: error }), {
        kind: 'remediate',
        revision: 3,
        remedy: { how: 'rollback', to: 2 },
      }),
    ).toEqual({ remediation: { failed: error } });
  });
});
