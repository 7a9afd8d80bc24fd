// Recovering a stuck release: from helm's history, the pending revision is marked failed, then
// remediated (rolled back or uninstalled) and the Recovered outcome told; the exact calls.
import { describe, expect, it } from 'vitest';
import type { HistoryEntry } from '../../../src/helm/helm-results.js';
import { recoverRelease, type RecoverPort } from '../../../src/reconcile/actions/recover.js';
import { narration, recorder, type Recorder } from './fake-port.js';

const rev = (revision: number, status: string): HistoryEntry =>
  ({
    revision,
    status,
    chart: 'shop-1.0.0',
    appVersion: '1',
    description: '',
    updated: '2026-11-27T08:00:00Z',
  }) as HistoryEntry;
const marked = (status: string) =>
  `Marked failed by helm-installer: left ${status} by an operation that no longer runs (no installer held the release lease)`;
const stuckLine = (revision: number, status: string) =>
  `warn release was stuck ${status}: marked revision ${revision} failed. Safe because this run holds the release lease, so no other installer is running that operation (a killed helm left it)`;

function port(r: Recorder, history: HistoryEntry[], stopped = false): RecoverPort {
  return {
    ...narration(r),
    history: async () => r.call('helm history', history),
    markFailed: async (revision, was, description) => r.call('mark failed', undefined, revision, was, description),
    holder: 'pod-a/1/x',
    tellRecovered: (note) => r.call('tell Recovered', undefined, note),
    rollback: async (to) => r.call('helm rollback', undefined, to),
    uninstall: async () => r.call('helm uninstall', undefined),
    annotateRecords: async () => r.call('annotate records', undefined),
    stopped: () => stopped,
  };
}

describe('recover', () => {
  const rows: [string, HistoryEntry[], string[]][] = [
    [
      'pending-upgrade: marked failed, rolled back to the deployed revision',
      [rev(1, 'superseded'), rev(2, 'deployed'), rev(3, 'pending-upgrade')],
      [
        'helm history',
        'stage recovering the release (pending-upgrade)',
        `mark failed 3 pending-upgrade ${marked('pending-upgrade')}`,
        stuckLine(3, 'pending-upgrade'),
        'helm rollback 2',
        'info rolled back to revision 2, the last deployed one; continuing',
        'annotate records',
        'tell Recovered release left pending-upgrade by a killed operation: rolled back to revision 2',
      ],
    ],
    [
      'pending-install: marked failed, uninstalled',
      [rev(1, 'pending-install')],
      [
        'helm history',
        'stage recovering the release (pending-install)',
        `mark failed 1 pending-install ${marked('pending-install')}`,
        stuckLine(1, 'pending-install'),
        'helm uninstall',
        'info uninstalled the first install that never deployed; installing again',
        'annotate records',
        'tell Recovered release left pending-install by a killed operation: uninstalled (it had never been deployed)',
      ],
    ],
    [
      'no longer pending when helm is asked: nothing done',
      [rev(1, 'superseded'), rev(2, 'deployed')],
      ['helm history'],
    ],
  ];
  for (const [name, history, calls] of rows) {
    it(name, async () => {
      const r = recorder();
      const status = history.at(-1)!.status;
      expect(
        await recoverRelease(port(r, history), {
          kind: 'recover',
          revision: history.at(-1)!.revision,
          pendingStatus: status,
        }),
      ).toEqual({});
      expect(r.calls).toEqual(calls);
    });
  }

  it('stopped during the rollback: no outcome told, no annotation', async () => {
    const r = recorder();
    await recoverRelease(port(r, [rev(2, 'deployed'), rev(3, 'pending-rollback')], true), {
      kind: 'recover',
      revision: 3,
      pendingStatus: 'pending-rollback',
    });
    expect(r.calls.filter((c) => c.startsWith('tell') || c.startsWith('annotate'))).toEqual([]);
    expect(r.calls).toContain('helm rollback 2');
  });
});
