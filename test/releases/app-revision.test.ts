// The app as one unit, pure: which releases go back and how, the revisions kept, and the
// summary's app line. Expected values written out by hand.
import { describe, expect, it } from 'vitest';
import {
  lastGood,
  nextRevision,
  revisionOf,
  rollbackSteps,
  withRevision,
  KEPT_REVISIONS,
  type AppRevision,
} from '../../src/releases/app-revision.js';
import { describeRollback } from '../../src/releases/app-rollback.js';
import { appLine } from '../../src/releases/plan-summary.js';
import type { ReleaseOutcome } from '../../src/releases/release-outcome.js';
import { HelmOperationError } from '../../src/common/errors.js';

const order = ['s/operator', 's/web', 's/report', 's/cache'];
const done = (key: string, action: string, revision: number): ReleaseOutcome => ({
  key,
  status: 'done',
  action,
  revision,
  chart: 'part-1.0.0',
  seconds: 1,
});
const failed = (key: string): ReleaseOutcome => ({
  key,
  status: 'failed',
  error: new HelmOperationError('boom'),
  seconds: 1,
});
const good: AppRevision = {
  revision: 4,
  status: 'deployed',
  at: '2026-11-27T00:00:00.000Z',
  releases: [
    { key: 's/operator', revision: 2 },
    { key: 's/web', revision: 3 },
    { key: 's/cache', revision: 1 },
  ],
};

describe('rollbackSteps', () => {
  it('each release not at its revision of the last good app revision goes back to it, one that revision lacks is uninstalled, dependents first', () => {
    // operator and cache upgraded by this run, web at 3, report never there.
    const at = (entries: [string, number, string?][]) =>
      new Map(entries.map(([k, revision, digest]) => [k, { revision, ...(digest ? { digest } : {}) }]));
    expect(
      rollbackSteps(
        order,
        at([
          ['s/operator', 3],
          ['s/web', 3],
          ['s/cache', 2],
        ]),
        good,
      ),
    ).toEqual([
      { key: 's/cache', kind: 'rollback', from: 2, to: 1 },
      { key: 's/operator', kind: 'rollback', from: 3, to: 2 },
    ]);
    // report installed by this run; the cache left upgraded (revision 2) by a run that was killed.
    expect(
      rollbackSteps(
        order,
        at([
          ['s/operator', 2],
          ['s/web', 3],
          ['s/report', 1],
          ['s/cache', 2],
        ]),
        good,
      ),
    ).toEqual([
      { key: 's/cache', kind: 'rollback', from: 2, to: 1 },
      { key: 's/report', kind: 'uninstall', from: 1 },
    ]);
    // web rolled back by helm to what revision 3 was (a new revision, the labels copied): already there.
    const withDigests: AppRevision = {
      ...good,
      releases: good.releases.map((r) => ({ ...r, digest: `d-${r.key}-${r.revision}` })),
    };
    expect(
      rollbackSteps(
        order,
        at([
          ['s/operator', 2],
          ['s/web', 5, 'd-s/web-3'],
          ['s/cache', 2, 'd-s/cache-2'],
        ]),
        withDigests,
      ),
    ).toEqual([{ key: 's/cache', kind: 'rollback', from: 2, to: 1 }]);
  });

  it('a first app install that fails half way: everything installed is uninstalled', () => {
    expect(
      rollbackSteps(
        order,
        new Map([
          ['s/operator', { revision: 1 }],
          ['s/cache', { revision: 1 }],
        ]),
        undefined,
      ),
    ).toEqual([
      { key: 's/cache', kind: 'uninstall', from: 1 },
      { key: 's/operator', kind: 'uninstall', from: 1 },
    ]);
  });
});

describe('a release plan edited between runs', () => {
  // The last good revision had operator, web and cache; the plan now renames cache to cache2,
  // adds queue, and lists extra, a release someone else made (its newest record not this app's).
  const edited = ['s/operator', 's/web', 's/cache2', 's/queue', 's/extra'];
  const at = new Map([
    ['s/operator', { revision: 3, ours: true }],
    ['s/web', { revision: 3, ours: true }],
    ['s/cache', { revision: 2, ours: true }],
    ['s/cache2', { revision: 1, ours: true }],
    ['s/queue', { revision: 1, ours: true }],
    ['s/extra', { revision: 7, ours: false }],
  ]);

  it('the rollback takes back only what the current plan lists and the app owns: cache (dropped) and extra (not ours) are not touched', () => {
    expect(rollbackSteps(edited, at, good)).toEqual([
      { key: 's/queue', kind: 'uninstall', from: 1 },
      { key: 's/cache2', kind: 'uninstall', from: 1 },
      { key: 's/operator', kind: 'rollback', from: 3, to: 2 },
    ]);
  });

  it("the revision records the edited plan: its releases that are this app's, not the dropped one nor one someone else made", () => {
    const current = new Map(edited.map((k) => [k, at.get(k)!]));
    expect(revisionOf(5, current, [], 'failed', new Date('2026-11-27T02:00:00Z')).releases).toEqual([
      { key: 's/operator', revision: 3 },
      { key: 's/web', revision: 3 },
      { key: 's/cache2', revision: 1 },
      { key: 's/queue', revision: 1 },
    ]);
  });
});

describe('app revisions', () => {
  it('numbers, the last good one, and what a revision records', () => {
    const failedOne: AppRevision = { ...good, revision: 5, status: 'rolled back', rolledBackTo: 4 };
    expect(nextRevision([])).toBe(1);
    expect(nextRevision([good, failedOne])).toBe(6);
    expect(lastGood([good, failedOne])).toBe(good);
    const current = new Map([
      ['s/operator', { revision: 3, digest: 'd3' }],
      ['s/web', { revision: 2 }],
    ]);
    expect(
      revisionOf(
        6,
        current,
        [done('s/operator', 'upgraded', 3), failed('s/web')],
        'rolled back',
        new Date('2026-11-27T01:00:00Z'),
        4,
      ),
    ).toEqual({
      revision: 6,
      status: 'rolled back',
      at: '2026-11-27T01:00:00.000Z',
      releases: [
        { key: 's/operator', revision: 3, chart: 'part-1.0.0', digest: 'd3' },
        { key: 's/web', revision: 2 },
      ],
      rolledBackTo: 4,
    });
  });

  it(`keeps ${KEPT_REVISIONS}, and always the last good one`, () => {
    const failures = Array.from({ length: 12 }, (_, i): AppRevision => ({
      ...good,
      revision: 5 + i,
      status: 'failed',
    }));
    const kept = withRevision([good, ...failures.slice(0, 11)], failures[11]!);
    expect(kept).toHaveLength(KEPT_REVISIONS);
    expect(kept[0]).toBe(good);
    expect(kept.at(-1)!.revision).toBe(16);
  });
});

describe('what the summary says', () => {
  it('names the app revision the cluster is left at', () => {
    expect(appLine(good)).toBe('app revision 4 deployed');
    expect(appLine({ ...good, revision: 5, status: 'rolled back', rolledBackTo: 4 })).toBe(
      'app revision 5 failed; every release it changed went back: the app is at app revision 4',
    );
    expect(appLine({ ...good, revision: 1, status: 'rolled back' })).toBe(
      'app revision 1 failed; every release it changed went back: the app is at where it was before its first install (nothing of it installed)',
    );
    expect(appLine({ ...good, revision: 5, status: 'failed' })).toBe(
      'app revision 5 failed; releases left as they are (--app-rollback never)',
    );
    expect(appLine({ ...good, revision: 5, status: 'nothing changed', rolledBackTo: 4 })).toBe(
      'app revision 5 failed and changed no release: the app is at app revision 4',
    );
  });

  it('a step that failed names what is left to do', () => {
    expect(
      describeRollback({ step: { key: 's/cache', kind: 'rollback', from: 2, to: 1 }, done: true, revision: 3 }),
    ).toBe('s/cache: rolled back from revision 2 to 1 (now revision 3)');
    expect(
      describeRollback({
        step: { key: 's/web', kind: 'uninstall', from: 1 },
        done: false,
        error: new HelmOperationError('uninstall of release web failed: timed out\nmore'),
      }),
    ).toBe(
      's/web: NOT uninstalled (new in the failed app revision); left to do: helm uninstall web -n s, or run the installer again (exit 4: uninstall of release web failed: timed out)',
    );
    // helm's causes run long and a summary line is cut at 300 characters: what to do comes first.
    const long = describeRollback({
      step: { key: 's/cache', kind: 'rollback', from: 2, to: 1 },
      done: false,
      error: new HelmOperationError(`rollback to revision 1 of release cache failed: ${'x'.repeat(400)}`),
    });
    expect(long).toMatch(
      /^s\/cache: NOT rolled back from revision 2 to 1; left to do: helm rollback cache 1 -n s, or run the installer again \(exit 4: rollback to revision 1 of release cache failed: x+\)$/,
    );
  });
});
