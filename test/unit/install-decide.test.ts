// The install decision, row by row of the table in src/install/decide.ts, without a cluster.
import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../src/drift/detect-drift.js';
import { decide, everDeployed, releaseStatus, type DecideOptions, type ReleaseState } from '../../src/install/decide.js';

const rev = (revision: number, status: string) => ({ revision, status, labels: {} });
const deployed = [rev(3, 'deployed')];
const changedImage: ObjectDrift = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'shop',
  name: 'web',
  missing: false,
  fields: [{ path: '/spec/template/spec/containers/0/image', live: 'nginx:1', desired: 'nginx:2', manager: 'kubectl-set' }],
};
const missingService: ObjectDrift = { apiVersion: 'v1', kind: 'Service', namespace: 'shop', name: 'web', missing: true, fields: [] };
const correct: DecideOptions = { drift: 'correct', forceUpgrade: false };
const warn: DecideOptions = { drift: 'warn', forceUpgrade: false };
const off: DecideOptions = { drift: 'off', forceUpgrade: false };

describe('decide: one action per release state', () => {
  const rows: [string, ReleaseState, DecideOptions, ReturnType<typeof decide>][] = [
    ['no release: install', { records: [] }, correct, { kind: 'install', reason: 'no release yet' }],
    ['pending-upgrade: recover', { records: [rev(1, 'superseded'), rev(2, 'deployed'), rev(3, 'pending-upgrade')] }, correct, { kind: 'recover', revision: 3, pendingStatus: 'pending-upgrade' }],
    ['pending-install: recover', { records: [rev(1, 'pending-install')] }, off, { kind: 'recover', revision: 1, pendingStatus: 'pending-install' }],
    ['pending-rollback: recover', { records: [rev(4, 'deployed'), rev(5, 'pending-rollback')] }, warn, { kind: 'recover', revision: 5, pendingStatus: 'pending-rollback' }],
    [
      'failed after a deployed revision: upgrade',
      { records: [rev(2, 'deployed'), rev(3, 'failed')] },
      correct,
      { kind: 'upgrade', status: 'failed', reason: 'last revision 3 is failed', drift: [] },
    ],
    [
      'failed first install: install',
      { records: [rev(1, 'failed')] },
      correct,
      { kind: 'install', reason: 'last revision 1 is failed and none was deployed' },
    ],
    [
      'inputs changed, drift found: upgrade carrying the drift',
      { records: deployed, inputs: { equal: false, reason: 'chart changed' }, drift: [missingService] },
      correct,
      { kind: 'upgrade', status: 'out-of-date', reason: 'chart changed', drift: [missingService] },
    ],
    [
      'inputs changed, drift off: upgrade',
      { records: deployed, inputs: { equal: false, reason: 'values or settings changed' } },
      off,
      { kind: 'upgrade', status: 'out-of-date', reason: 'values or settings changed', drift: [] },
    ],
    [
      'equal inputs, drift, correct: correct drift',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [changedImage, missingService] },
      correct,
      { kind: 'correct-drift', revision: 3, drift: [changedImage, missingService] },
    ],
    [
      'equal inputs, drift, correct, not ready: still a correction (the drift may be why)',
      { records: deployed, inputs: { equal: true }, unready: ['Deployment/web: 0/1 ready'], drift: [changedImage] },
      correct,
      { kind: 'correct-drift', revision: 3, drift: [changedImage] },
    ],
    [
      'equal inputs, drift, warn, ready: skip, drift named',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [changedImage] },
      warn,
      { kind: 'skip', status: 'drifted', revision: 3, drift: [changedImage] },
    ],
    [
      'equal inputs, drift, warn, not ready: upgrade as before drift existed',
      { records: deployed, inputs: { equal: true }, unready: ['Deployment/web: 0/1 ready'], drift: [changedImage] },
      warn,
      { kind: 'upgrade', status: 'unhealthy', reason: 'not healthy: Deployment/web: 0/1 ready', drift: [changedImage] },
    ],
    [
      'equal inputs, no drift, not ready: upgrade',
      { records: deployed, inputs: { equal: true }, unready: ['StatefulSet/db: 0/1 ready', 'Deployment/web: rollout not observed yet'], drift: [] },
      correct,
      { kind: 'upgrade', status: 'unhealthy', reason: 'not healthy: StatefulSet/db: 0/1 ready; Deployment/web: rollout not observed yet', drift: [] },
    ],
    [
      'equal inputs, drift not read (off), ready: skip',
      { records: deployed, inputs: { equal: true }, unready: [] },
      off,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
    ['in sync: skip', { records: deployed, inputs: { equal: true }, unready: [], drift: [] }, correct, { kind: 'skip', status: 'in-sync', revision: 3, drift: [] }],
    [
      'in sync, --force-upgrade: upgrade',
      { records: deployed, inputs: { equal: true }, drift: [] },
      { drift: 'correct', forceUpgrade: true },
      { kind: 'upgrade', status: 'in-sync', reason: '--force-upgrade', drift: [] },
    ],
    [
      'drifted, --force-upgrade: the upgrade puts it back',
      { records: deployed, inputs: { equal: true }, drift: [missingService] },
      { drift: 'correct', forceUpgrade: true },
      { kind: 'upgrade', status: 'drifted', reason: '--force-upgrade', drift: [missingService] },
    ],
  ];
  for (const [name, state, options, action] of rows) {
    it(name, () => expect(decide(state, options)).toEqual(action));
  }
});

describe('releaseStatus and everDeployed', () => {
  it('names the most urgent thing the state shows', () => {
    expect(releaseStatus({ records: [] })).toBe('absent');
    expect(releaseStatus({ records: [rev(1, 'pending-install')] })).toBe('pending');
    expect(releaseStatus({ records: [rev(1, 'uninstalling')] })).toBe('failed');
    expect(releaseStatus({ records: deployed, inputs: { equal: false, reason: 'chart changed' }, drift: [changedImage] })).toBe('out-of-date');
    expect(releaseStatus({ records: deployed, inputs: { equal: true }, unready: ['x'], drift: [changedImage] })).toBe('drifted');
    expect(releaseStatus({ records: deployed, inputs: { equal: true }, unready: ['x'], drift: [] })).toBe('unhealthy');
    expect(releaseStatus({ records: deployed, inputs: { equal: true }, unready: [], drift: [] })).toBe('in-sync');
  });

  it('a release was deployed once when any revision is deployed or superseded', () => {
    expect(everDeployed([])).toBe(false);
    expect(everDeployed([{ status: 'failed' }, { status: 'pending-install' }])).toBe(false);
    expect(everDeployed([{ status: 'superseded' }, { status: 'failed' }])).toBe(true);
    expect(everDeployed([{ status: 'deployed' }])).toBe(true);
  });
});
