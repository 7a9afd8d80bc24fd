// The plan's decision line for each of install's actions: what a reviewer reads before an install.
import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../src/drift/detect-drift.js';
import { planDecision, runsHooks } from '../../src/preview/preview.js';

const drift: ObjectDrift[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cache', missing: true, fields: [] },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespace: 'shop',
    name: 'web',
    missing: false,
    fields: [{ path: '/spec/replicas', live: '5', desired: '2' }],
  },
];

describe('planDecision', () => {
  it('states each action of the decision table with its reason', () => {
    expect(planDecision({ kind: 'install', reason: 'no release yet' })).toEqual({
      action: 'install',
      reason: 'no release yet',
    });
    expect(planDecision({ kind: 'upgrade', status: 'out-of-date', reason: 'values changed', drift: [] })).toEqual({
      action: 'upgrade',
      reason: 'values changed',
    });
    expect(planDecision({ kind: 'recover', revision: 3, pendingStatus: 'pending-upgrade' })).toEqual({
      action: 'recover',
      reason:
        'revision 3 is pending-upgrade (a killed operation): install rolls it back, then decides again on the state below',
    });
    expect(planDecision({ kind: 'correct-drift', revision: 2, drift })).toEqual({
      action: 'correct drift',
      reason: '2 object(s) differ from revision 2: install puts them back, no new revision',
    });
    expect(planDecision({ kind: 'skip', status: 'drifted', revision: 2, drift })).toEqual({
      action: 'nothing',
      reason: '2 object(s) differ from revision 2, left as they are (--drift warn)',
    });
    expect(planDecision({ kind: 'skip', status: 'in-sync', revision: 7, drift: [] })).toEqual({
      action: 'nothing',
      reason: 'chart and values equal revision 7, which is deployed and healthy',
    });
  });

  it('lists hooks only for an action that runs helm: install, upgrade, recover', () => {
    const actions = ['install', 'upgrade', 'recover', 'correct drift', 'nothing'] as const;
    expect(actions.filter((action) => runsHooks({ action, reason: '' }))).toEqual(['install', 'upgrade', 'recover']);
  });
});
