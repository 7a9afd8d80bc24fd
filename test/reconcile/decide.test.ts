// The install decision, row by row of the table in src/reconcile/decide.ts, without a cluster.
import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../src/drift/detect-drift.js';
import {
  decide,
  everDeployed,
  nextStep,
  releaseStatus,
  type DecideOptions,
  type LoopOptions,
  type ReleaseState,
  type SoFar,
  type Step,
  type TestsFound,
} from '../../src/reconcile/decide.js';

const rev = (revision: number, status: string) => ({ revision, status, labels: {} });
const deployed = [rev(3, 'deployed')];
const changedImage: ObjectDrift = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'shop',
  name: 'web',
  missing: false,
  fields: [
    { path: '/spec/template/spec/containers/0/image', live: 'nginx:1', desired: 'nginx:2', manager: 'kubectl-set' },
  ],
};
const missingService: ObjectDrift = {
  apiVersion: 'v1',
  kind: 'Service',
  namespace: 'shop',
  name: 'web',
  missing: true,
  fields: [],
};
const correct: DecideOptions = { drift: 'correct', forceUpgrade: false };
const warn: DecideOptions = { drift: 'warn', forceUpgrade: false };
const off: DecideOptions = { drift: 'off', forceUpgrade: false };

describe('decide: one action per release state', () => {
  const rows: [string, ReleaseState, DecideOptions, ReturnType<typeof decide>][] = [
    ['no release: install', { records: [] }, correct, { kind: 'install', reason: 'no release yet' }],
    [
      'pending-upgrade: recover',
      { records: [rev(1, 'superseded'), rev(2, 'deployed'), rev(3, 'pending-upgrade')] },
      correct,
      { kind: 'recover', revision: 3, pendingStatus: 'pending-upgrade' },
    ],
    [
      'pending-install: recover',
      { records: [rev(1, 'pending-install')] },
      off,
      { kind: 'recover', revision: 1, pendingStatus: 'pending-install' },
    ],
    [
      'pending-rollback: recover',
      { records: [rev(4, 'deployed'), rev(5, 'pending-rollback')] },
      warn,
      { kind: 'recover', revision: 5, pendingStatus: 'pending-rollback' },
    ],
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
      {
        records: deployed,
        inputs: { equal: true },
        unready: ['StatefulSet/db: 0/1 ready', 'Deployment/web: rollout not observed yet'],
        drift: [],
      },
      correct,
      {
        kind: 'upgrade',
        status: 'unhealthy',
        reason: 'not healthy: StatefulSet/db: 0/1 ready; Deployment/web: rollout not observed yet',
        drift: [],
      },
    ],
    [
      'equal inputs, drift not read (off), ready: skip',
      { records: deployed, inputs: { equal: true }, unready: [] },
      off,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
    [
      'in sync: skip',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [] },
      correct,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
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
    expect(
      releaseStatus({ records: deployed, inputs: { equal: false, reason: 'chart changed' }, drift: [changedImage] }),
    ).toBe('out-of-date');
    expect(releaseStatus({ records: deployed, inputs: { equal: true }, unready: ['x'], drift: [changedImage] })).toBe(
      'drifted',
    );
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

describe('nextStep: the loop, one step per round from the state and what the run did', () => {
  const loop: LoopOptions = {
    drift: 'correct',
    forceUpgrade: false,
    test: false,
    testFailure: 'rollback',
    takeOwnership: 'never',
  };
  const adopting: LoopOptions = { ...loop, takeOwnership: 'first-install' };
  const tested: LoopOptions = { ...loop, test: true };
  const fresh: SoFar = { recoveries: 0 };
  const crds = {
    created: ['widgets.example.com'],
    updated: [],
    migrated: [],
    adopted: [],
    bridged: [],
    finish: async () => undefined,
  };
  const outOfDate: ReleaseState = {
    records: [rev(1, 'superseded'), rev(2, 'deployed')],
    inputs: { equal: false, reason: 'chart changed' },
    drift: [missingService],
  };
  const upgradeGoal: Extract<Step, { kind: 'upgrade' }> = {
    kind: 'upgrade',
    status: 'out-of-date',
    reason: 'chart changed',
    drift: [missingService],
  };
  const firstInstall: ReleaseState = { records: [] };
  const installGoal: Extract<Step, { kind: 'install' }> = { kind: 'install', reason: 'no release yet' };
  const failedTests: Extract<TestsFound, { passed: false }> = {
    passed: false,
    problems: [{ object: 'Pod/shop-test', reason: 'Error', detail: 'container t exited 3' }],
    failure: 'pod shop-test failed',
    timedOut: false,
  };
  const drifted: ReleaseState = {
    records: deployed,
    inputs: { equal: true },
    unready: [],
    drift: [changedImage, missingService],
  };

  // So far: revision 3 upgraded (no CRD step, nothing recreated) and its tests failed.
  const testsFailedOn3: SoFar = {
    recoveries: 0,
    crds: { outcome: undefined, finished: false },
    recreated: [],
    upgraded: { revision: 3 },
    tests: failedTests,
  };
  // Drift corrected but for the image, whose field the API server refused to change.
  const partlyRefused = {
    revision: 3,
    drift: [changedImage, missingService],
    corrected: [missingService],
    notPutBack: [{ drift: changedImage, reason: 'field is immutable' }],
  };
  const pdb = { kind: 'PodDisruptionBudget', name: 'web', from: 'policy/v1beta1', to: 'policy/v1', removedIn: '1.25' };
  const stale = [{ revision: 3, mappings: [pdb] }];
  const rows: [string, ReleaseState, SoFar, LoopOptions, Step][] = [
    [
      'record names removed APIs: map them before anything, even a skip',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [], removedApis: stale },
      fresh,
      loop,
      { kind: 'map-apis', records: stale },
    ],
    [
      'record names removed APIs, stuck: map them before the recovery (its rollback builds the record)',
      { records: [rev(2, 'deployed'), rev(3, 'pending-upgrade')], removedApis: stale },
      fresh,
      loop,
      { kind: 'map-apis', records: stale },
    ],
    [
      'removed APIs mapped: the release table decides (skip)',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [], removedApis: stale },
      { recoveries: 0, mapped: [{ ...stale[0]!, copy: 'c' }] },
      loop,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
    [
      'removed APIs mapped, inputs changed: the claims check, first of an upgrade',
      { ...outOfDate, removedApis: stale },
      { recoveries: 0, mapped: [{ ...stale[0]!, copy: 'c' }] },
      loop,
      { kind: 'claims', previous: 2 },
    ],
    [
      'removed APIs mapped, claims checked: crds, then the upgrade',
      { ...outOfDate, removedApis: stale },
      { recoveries: 0, orphaned: [], mapped: [{ ...stale[0]!, copy: 'c' }] },
      loop,
      { kind: 'crds', goal: upgradeGoal },
    ],
    [
      'nothing done yet: the release table decides (skip)',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [] },
      fresh,
      loop,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
    [
      'stuck: recover',
      { records: [rev(2, 'deployed'), rev(3, 'pending-upgrade')] },
      fresh,
      loop,
      { kind: 'recover', revision: 3, pendingStatus: 'pending-upgrade' },
    ],
    [
      'stuck again after one recovery: recover again',
      { records: [rev(3, 'pending-upgrade')] },
      { recoveries: 1 },
      loop,
      { kind: 'recover', revision: 3, pendingStatus: 'pending-upgrade' },
    ],
    [
      'stuck again after two recoveries: a fault',
      { records: [rev(3, 'pending-upgrade')] },
      { recoveries: 2 },
      loop,
      { kind: 'still-pending', recoveries: 2 },
    ],
    [
      'recovered into what the run asks for: skip',
      { records: deployed, inputs: { equal: true }, unready: [], drift: [] },
      { recoveries: 1 },
      loop,
      { kind: 'skip', status: 'in-sync', revision: 3, drift: [] },
    ],
    [
      'drift, correct: correct drift',
      drifted,
      fresh,
      loop,
      { kind: 'correct-drift', revision: 3, drift: [changedImage, missingService] },
    ],
    [
      'drift all put back: corrected (no test, no upgrade)',
      drifted,
      {
        recoveries: 0,
        correction: {
          revision: 3,
          drift: [changedImage, missingService],
          corrected: [changedImage, missingService],
          notPutBack: [],
        },
      },
      tested,
      { kind: 'corrected', revision: 3, corrected: [changedImage, missingService] },
    ],
    [
      'drift partly refused: upgrade carrying all of it, claims checked first',
      drifted,
      {
        recoveries: 0,
        correction: partlyRefused,
      },
      loop,
      { kind: 'claims', previous: 3 },
    ],
    [
      'drift partly refused, claims checked: CRDs',
      drifted,
      {
        recoveries: 0,
        orphaned: [],
        correction: partlyRefused,
      },
      loop,
      {
        kind: 'crds',
        goal: {
          kind: 'upgrade',
          status: 'drifted',
          reason: 'drift that could not be put back',
          drift: [changedImage, missingService],
        },
      },
    ],
    [
      'upgrade decided: the claims it would leave behind checked first, against the deployed revision',
      outOfDate,
      fresh,
      loop,
      { kind: 'claims', previous: 2 },
    ],
    [
      'upgrade, claims checked: crds',
      outOfDate,
      { recoveries: 0, orphaned: [] },
      loop,
      { kind: 'crds', goal: upgradeGoal },
    ],
    ['install decided: crds first', firstInstall, fresh, loop, { kind: 'crds', goal: installGoal }],
    [
      'install decided, --take-ownership first-install: owners before anything',
      firstInstall,
      fresh,
      adopting,
      { kind: 'owners', goal: installGoal, mode: 'first-install' },
    ],
    [
      'install, owners read: crds',
      firstInstall,
      { recoveries: 0, owners: { adopted: [], taken: [], refused: [] } },
      adopting,
      { kind: 'crds', goal: installGoal },
    ],
    [
      'upgrade decided, --take-ownership first-install: no adoption, the claims check first',
      outOfDate,
      fresh,
      adopting,
      { kind: 'claims', previous: 2 },
    ],
    [
      'upgrade decided, --take-ownership always: owners before anything',
      outOfDate,
      fresh,
      { ...loop, takeOwnership: 'always' },
      { kind: 'owners', goal: upgradeGoal, mode: 'always' },
    ],
    [
      'install decided, --take-ownership never: crds first',
      firstInstall,
      fresh,
      { ...loop, takeOwnership: 'never' },
      { kind: 'crds', goal: installGoal },
    ],
    [
      'upgrade, CRDs done: recreate against the deployed revision',
      outOfDate,
      { recoveries: 0, orphaned: [], crds: { outcome: undefined, finished: false } },
      loop,
      { kind: 'recreate', previous: 2 },
    ],
    [
      'upgrade after a failed one, CRDs done: recreate against the newest superseded',
      { records: [rev(1, 'superseded'), rev(2, 'superseded'), rev(3, 'failed')] },
      { recoveries: 0, orphaned: [], crds: { outcome: undefined, finished: false } },
      loop,
      { kind: 'recreate', previous: 2 },
    ],
    [
      'install, CRDs done: helm (nothing to recreate)',
      firstInstall,
      { recoveries: 0, crds: { outcome: undefined, finished: false } },
      loop,
      installGoal,
    ],
    [
      'upgrade, CRDs and recreate done: helm',
      outOfDate,
      { recoveries: 0, orphaned: [], crds: { outcome: undefined, finished: false }, recreated: [] },
      loop,
      upgradeGoal,
    ],
    [
      'upgrade, CRDs applied as intermediate CRDs: helm, its revision marked so',
      outOfDate,
      {
        recoveries: 0,
        orphaned: [],
        crds: { outcome: { ...crds, bridged: ['widgets.example.com'] }, finished: false },
        recreated: [],
      },
      loop,
      { ...upgradeGoal, crdsBridged: true },
    ],
    [
      'upgraded, CRDs held back: finish them',
      outOfDate,
      { recoveries: 0, crds: { outcome: crds, finished: false }, recreated: [], upgraded: { revision: 3 } },
      tested,
      { kind: 'finish-crds', crds },
    ],
    [
      'upgraded, --test: test the new revision',
      outOfDate,
      { recoveries: 0, crds: { outcome: crds, finished: true }, recreated: [], upgraded: { revision: 3 } },
      tested,
      { kind: 'test', revision: 3 },
    ],
    [
      'upgraded, no --test: done, the drift named',
      outOfDate,
      { recoveries: 0, crds: { outcome: undefined, finished: false }, recreated: [], upgraded: { revision: 3 } },
      loop,
      { kind: 'upgraded', everDeployed: true, revision: 3, drift: [missingService], recreated: [] },
    ],
    [
      'tests passed: done',
      firstInstall,
      {
        recoveries: 0,
        crds: { outcome: undefined, finished: false },
        upgraded: { revision: 1 },
        tests: { passed: true, names: ['shop-test'] },
      },
      tested,
      { kind: 'upgraded', everDeployed: false, revision: 1, drift: [], recreated: [] },
    ],
    [
      'tests failed on revision 3: remediate, back to revision 2',
      outOfDate,
      testsFailedOn3,
      tested,
      { kind: 'remediate', revision: 3, remedy: { how: 'rollback', to: 2 } },
    ],
    [
      'tests failed on a first install: remediate by uninstalling',
      firstInstall,
      { recoveries: 0, crds: { outcome: undefined, finished: false }, upgraded: { revision: 1 }, tests: failedTests },
      tested,
      { kind: 'remediate', revision: 1, remedy: { how: 'uninstall' } },
    ],
    [
      'tests failed, remediated: exit 4 saying what was done',
      outOfDate,
      {
        ...testsFailedOn3,
        remediation: { done: 'rolled back to revision 2' },
      },
      tested,
      { kind: 'tests-failed', revision: 3, tests: failedTests, remediation: { done: 'rolled back to revision 2' } },
    ],
    [
      'tests failed, --test-failure keep: exit 4, kept',
      outOfDate,
      testsFailedOn3,
      { ...tested, testFailure: 'keep' },
      {
        kind: 'tests-failed',
        revision: 3,
        tests: failedTests,
        remediation: { done: 'kept at revision 3 (--test-failure keep)' },
      },
    ],
  ];
  for (const [name, state, so, options, step] of rows) {
    it(name, () => expect(nextStep(state, so, options)).toEqual(step));
  }

  it('walks a tested upgrade to its end, one step a round', () => {
    let so: SoFar = fresh;
    const kinds: string[] = [];
    const found: Record<string, Partial<SoFar>> = {
      claims: { orphaned: [] },
      crds: { crds: { outcome: crds, finished: false } },
      recreate: { recreated: [] },
      upgrade: { upgraded: { revision: 3 } },
      'finish-crds': { crds: { outcome: crds, finished: true } },
      test: { tests: failedTests },
      remediate: { remediation: { done: 'rolled back to revision 2' } },
    };
    for (let round = 0; round < 10; round++) {
      const step = nextStep(outOfDate, so, tested);
      kinds.push(step.kind);
      if (!found[step.kind]) break;
      so = { ...so, ...found[step.kind] };
    }
    expect(kinds).toEqual([
      'claims',
      'crds',
      'recreate',
      'upgrade',
      'finish-crds',
      'test',
      'remediate',
      'tests-failed',
    ]);
  });
});
