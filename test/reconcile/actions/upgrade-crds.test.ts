// The CRD steps around helm: none asked of the cluster for a render without a CRD; the outcome
// kept to be finished after helm; the path's reason named first.
import { describe, expect, it } from 'vitest';
import type { CrdOutcome } from '../../../src/crds/upgrade-crds.js';
import type { Action } from '../../../src/reconcile/decide.js';
import { applyChartCrds, finishChartCrds, type CrdsPort } from '../../../src/reconcile/actions/upgrade-crds.js';
import { narration, recorder, type Recorder } from './fake-port.js';

const withCrd =
  'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n';
const noCrd = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n';

function outcome(r: Recorder): CrdOutcome {
  return {
    created: ['widgets.example.com'],
    updated: [],
    migrated: [],
    adopted: [],
    bridged: [],
    finish: async () => r.call('finish CRDs', undefined),
  };
}

function port(r: Recorder, manifests: string, o: CrdOutcome): CrdsPort {
  return { ...narration(r), manifests, upgradeCrds: async () => r.call('upgrade CRDs', o) };
}

describe('CRD steps', () => {
  it('a render without a CRD: nothing asked, the reason named', async () => {
    const r = recorder();
    const found = await applyChartCrds(port(r, noCrd, outcome(r)), {
      kind: 'crds',
      goal: { kind: 'install', reason: 'no release yet' },
    });
    expect(found).toEqual({ crds: { outcome: undefined, finished: false } });
    expect(r.calls).toEqual(['info installing: no release yet']);
  });

  it('a render with a CRD: applied before helm, finished after', async () => {
    const r = recorder();
    const o = outcome(r);
    const goal: Extract<Action, { kind: 'upgrade' }> = {
      kind: 'upgrade',
      status: 'out-of-date',
      reason: 'chart changed',
      drift: [],
    };
    expect(await applyChartCrds(port(r, withCrd, o), { kind: 'crds', goal })).toEqual({
      crds: { outcome: o, finished: false },
    });
    expect(await finishChartCrds(undefined, { kind: 'finish-crds', crds: o })).toEqual({
      crds: { outcome: o, finished: true },
    });
    expect(r.calls).toEqual(['info upgrading: chart changed', 'stage CRDs', 'upgrade CRDs', 'finish CRDs']);
  });
});
