// The reconcile loop (act.ts) with fake actions and a fake read: which steps run in which order,
// what each found carried into the next decision, the release read again only after a recovery,
// helm's failure after a failed drift correction naming what was not put back, the round bound.
import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../src/drift/detect-drift.js';
import { HelmOperationError } from '../../src/common/errors.js';
import type { Found } from '../../src/reconcile/actions/action.js';
import { MAX_ROUNDS, reconcile, type Actions, type Ending, type Loop } from '../../src/reconcile/act.js';
import type { Ports } from '../../src/reconcile/act-ports.js';
import type { LoopOptions, ReleaseState } from '../../src/reconcile/decide.js';

const rev = (revision: number, status: string) => ({ revision, status, labels: {} });
const options: LoopOptions = {
  drift: 'correct',
  forceUpgrade: false,
  test: true,
  testFailure: 'rollback',
  takeOwnership: 'never',
};
const service: ObjectDrift = {
  apiVersion: 'v1',
  kind: 'Service',
  namespace: 'shop',
  name: 'web',
  missing: false,
  fields: [{ path: '/spec/clusterIP', live: '10.0.0.9', desired: '10.0.0.1' }],
};

/** Fake actions: each records its step's kind and returns what `found` says for it (a function: per call). */
function loop(
  reads: ReleaseState[],
  found: Partial<Record<keyof Actions, (n: number) => Found | Promise<Found>>>,
  opts: LoopOptions = options,
) {
  const ran: string[] = [];
  const counts: Record<string, number> = {};
  const fake = (kind: keyof Actions) => async () => {
    ran.push(kind);
    counts[kind] = (counts[kind] ?? 0) + 1;
    return (await found[kind]?.(counts[kind]!)) ?? {};
  };
  const kinds: (keyof Actions)[] = [
    'recover',
    'correct-drift',
    'owners',
    'claims',
    'crds',
    'recreate',
    'install',
    'upgrade',
    'finish-crds',
    'test',
    'remediate',
  ];
  const actions = Object.fromEntries(kinds.map((k) => [k, fake(k)])) as unknown as Actions;
  let ended: Ending | undefined;
  const l: Loop = {
    read: async (known) => {
      ran.push(known ? 'read (known)' : 'read');
      return known ?? reads.shift()!;
    },
    ports: {} as Ports,
    actions,
    options: opts,
    end: async (step) => {
      ended = step;
      return 0;
    },
  };
  return { l, ran, ended: () => ended };
}

describe('reconcile loop', () => {
  it('a stuck release: recovered, read again, then upgraded and tested', async () => {
    const stuck: ReleaseState = { records: [rev(2, 'deployed'), rev(3, 'pending-upgrade')] };
    const failed: ReleaseState = { records: [rev(2, 'deployed'), rev(3, 'failed')] };
    const f = loop([failed], {
      upgrade: () => ({ upgraded: { revision: 4 } }),
      crds: () => ({ crds: { outcome: undefined, finished: false } }),
      claims: () => ({ orphaned: [] }),
      recreate: () => ({ recreated: [] }),
      test: () => ({ tests: { passed: true, names: ['t'] } }),
    });
    expect(await reconcile(f.l, stuck)).toBe(0);
    expect(f.ran).toEqual(['read (known)', 'recover', 'read', 'claims', 'crds', 'recreate', 'upgrade', 'test']);
    expect(f.ended()).toEqual({ kind: 'upgraded', everDeployed: true, revision: 4, drift: [], recreated: [] });
  });

  it('tests failed on a first install: remediated, then the failure', async () => {
    const f = loop([], {
      crds: () => ({ crds: { outcome: undefined, finished: false } }),
      install: () => ({ upgraded: { revision: 1 } }),
      test: () => ({ tests: { passed: false, problems: [], failure: 'pod t failed', timedOut: false } }),
      remediate: () => ({ remediation: { done: 'uninstalled (it was a first install)' } }),
    });
    await reconcile(f.l, { records: [] });
    expect(f.ran).toEqual(['read (known)', 'crds', 'install', 'test', 'remediate']);
    expect(f.ended()).toMatchObject({
      kind: 'tests-failed',
      revision: 1,
      remediation: { done: 'uninstalled (it was a first install)' },
    });
  });

  it("a drift correction that left an object: helm's upgrade, whose failure names it", async () => {
    const drifted: ReleaseState = {
      records: [rev(3, 'deployed')],
      inputs: { equal: true },
      unready: [],
      drift: [service],
    };
    const f = loop([], {
      'correct-drift': () => ({
        correction: {
          revision: 3,
          drift: [service],
          corrected: [],
          notPutBack: [{ drift: service, reason: 'spec.clusterIP: field is immutable' }],
        },
      }),
      crds: () => ({ crds: { outcome: undefined, finished: false } }),
      claims: () => ({ orphaned: [] }),
      recreate: () => ({ recreated: [] }),
      upgrade: () => Promise.reject(new HelmOperationError('upgrade of release shop failed: Service "web" is invalid')),
    });
    const error = (await reconcile(f.l, drifted).catch((e: unknown) => e)) as Error;
    expect(f.ran).toEqual(['read (known)', 'correct-drift', 'claims', 'crds', 'recreate', 'upgrade']);
    expect(error.message).toBe(
      'upgrade of release shop failed: Service "web" is invalid\ndrift that could not be put back before this upgrade:\n  Service/shop/web: spec.clusterIP: field is immutable',
    );
  });

  it('a first install with --take-ownership first-install: owners read before the CRDs; their refusal ends the run before any change', async () => {
    const adopting: LoopOptions = { ...options, test: false, takeOwnership: 'first-install' };
    const ok = loop(
      [],
      {
        owners: () => ({ owners: { adopted: [], taken: [], refused: [] } }),
        crds: () => ({ crds: { outcome: undefined, finished: false } }),
        install: () => ({ upgraded: { revision: 1 } }),
      },
      adopting,
    );
    expect(await reconcile(ok.l, { records: [] })).toBe(0);
    expect(ok.ran).toEqual(['read (known)', 'owners', 'crds', 'install']);
    const refused = loop(
      [],
      {
        owners: () =>
          Promise.reject(
            new HelmOperationError('1 object(s) of release shop (namespace shop) belong to another helm release'),
          ),
      },
      adopting,
    );
    await expect(reconcile(refused.l, { records: [] })).rejects.toThrow('belong to another helm release');
    expect(refused.ran).toEqual(['read (known)', 'owners']);
  });

  it('still pending after two recoveries: exit 1 naming them', async () => {
    const stuck: ReleaseState = { records: [rev(3, 'pending-upgrade')] };
    const f = loop([stuck, stuck], {});
    await reconcile(f.l, stuck);
    expect(f.ran).toEqual(['read (known)', 'recover', 'read', 'recover', 'read']);
    expect(f.ended()).toEqual({ kind: 'still-pending', recoveries: 2 });
  });

  it('an action that never brings the run forward stops at the round bound', async () => {
    const drifted: ReleaseState = {
      records: [rev(3, 'deployed')],
      inputs: { equal: true },
      unready: [],
      drift: [service],
    };
    const f = loop([], {});
    await expect(reconcile(f.l, drifted)).rejects.toThrow(`the release was not done after ${MAX_ROUNDS} steps`);
    expect(f.ran.filter((k) => k === 'correct-drift')).toHaveLength(MAX_ROUNDS);
  });
});
