// Pure classification of what helm waits for: each unready pod's reason, the latest Event per
// object, the summary lines, and the fail-fast bookkeeping.
import { describe, expect, it } from 'vitest';
import {
  describeProblems,
  HopelessTracker,
  jobProblem,
  latestEvents,
  matches,
  nextPollDelay,
  podProblem,
  pollPlan,
} from '../../src/cluster/wait-diagnosis.js';

const pod = (status: object, name = 'web-1') => ({ metadata: { name }, status }) as never;

describe('podProblem', () => {
  it('ImagePullBackOff names the image and the kubelet message', () => {
    expect(
      podProblem(
        pod({
          phase: 'Pending',
          containerStatuses: [
            {
              name: 'web',
              image: 'registry.local/app/web:1.2',
              ready: false,
              restartCount: 0,
              state: {
                waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.local/app/web:1.2"' },
              },
            },
          ],
        }),
      ),
    ).toEqual({
      object: 'Pod/web-1',
      reason: 'ImagePullBackOff',
      detail: 'image registry.local/app/web:1.2: Back-off pulling image "registry.local/app/web:1.2"',
      container: 'web',
    });
  });
  it('CrashLoopBackOff names the container, its last exit code and restarts', () => {
    expect(
      podProblem(
        pod({
          phase: 'Running',
          containerStatuses: [
            {
              name: 'web',
              image: 'x',
              ready: false,
              restartCount: 4,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
              lastState: { terminated: { exitCode: 1, reason: 'Error' } },
            },
          ],
        }),
      ),
    ).toEqual({
      object: 'Pod/web-1',
      reason: 'CrashLoopBackOff',
      detail: 'container web exited 1 (Error), restarted 4 times',
      container: 'web',
      restarts: 4,
    });
  });
  it('a restarted container shown terminated between back-offs is the crash loop; in a pod that never restarts it is an error', () => {
    const status = {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'app',
          image: 'x',
          ready: false,
          restartCount: 2,
          state: { terminated: { exitCode: 1, reason: 'Error' } },
        },
      ],
    };
    expect(podProblem({ metadata: { name: 'web-1' }, spec: { restartPolicy: 'Always' }, status } as never)).toEqual({
      object: 'Pod/web-1',
      reason: 'CrashLoopBackOff',
      detail: 'container app exited 1 (Error), restarted 2 times',
      container: 'app',
      restarts: 2,
    });
    expect(podProblem({ metadata: { name: 'web-1' }, spec: { restartPolicy: 'Never' }, status } as never)).toEqual({
      object: 'Pod/web-1',
      reason: 'Error',
      detail: 'container app exited 1',
      container: 'app',
      restarts: 2,
    });
  });
  it('Unschedulable carries the scheduler message; a ready or succeeded pod is no problem', () => {
    expect(
      podProblem(
        pod({
          phase: 'Pending',
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
            },
          ],
        }),
      ),
    ).toEqual({
      object: 'Pod/web-1',
      reason: 'Unschedulable',
      detail: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
      refusal: 'scheduler',
      wayOut: [
        "no node has the labels the pods ask for (their node affinity): fix the chart's nodeSelector or affinity values, or label a node (kubectl get nodes --show-labels)",
      ],
    });
    expect(
      podProblem(
        pod({
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ name: 'web', ready: true, state: { running: {} } }],
        }),
      ),
    ).toBeUndefined();
    expect(podProblem(pod({ phase: 'Succeeded' }))).toBeUndefined();
  });
  it('a failed hook pod: the container exit code', () => {
    expect(
      podProblem(
        pod(
          {
            phase: 'Failed',
            containerStatuses: [
              { name: 'migrate', state: { terminated: { exitCode: 3, reason: 'Error', message: 'no database' } } },
            ],
          },
          'migrate-x',
        ),
      ),
    ).toEqual({
      object: 'Pod/migrate-x',
      reason: 'Error',
      detail: 'container migrate exited 3: no database',
      container: 'migrate',
    });
  });
});

describe('jobProblem and events', () => {
  it('a failed Job gives its condition reason', () => {
    expect(
      jobProblem({
        metadata: { name: 'shop-migrate' },
        status: {
          conditions: [
            {
              type: 'Failed',
              status: 'True',
              reason: 'BackoffLimitExceeded',
              message: 'Job has reached the specified backoff limit',
            },
          ],
        },
      } as never),
    ).toEqual({
      object: 'Job/shop-migrate',
      reason: 'BackoffLimitExceeded',
      detail: 'Job has reached the specified backoff limit',
    });
    expect(
      jobProblem({ metadata: { name: 'ok' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as never),
    ).toBeUndefined();
  });
  it('keeps the newest event per object', () => {
    const ev = (name: string, reason: string, at: string) => ({
      involvedObject: { kind: 'Pod', name },
      reason,
      message: `${reason} msg`,
      lastTimestamp: new Date(at),
    });
    const latest = latestEvents([
      ev('a', 'Pulling', '2026-11-22T10:00:00Z'),
      ev('a', 'Failed', '2026-11-22T10:00:05Z'),
      ev('a', 'BackOff', '2026-11-22T10:00:03Z'),
      ev('b', 'Scheduled', '2026-11-22T10:00:00Z'),
    ] as never);
    expect([...latest]).toEqual([
      ['Pod/a', 'Failed: Failed msg'],
      ['Pod/b', 'Scheduled: Scheduled msg'],
    ]);
  });
  it('summary lines: object, reason, detail, event, log tail; capped', () => {
    const lines = describeProblems([
      {
        object: 'Pod/a',
        reason: 'CrashLoopBackOff',
        detail: 'container web exited 1',
        event: 'BackOff: restarting',
        logTail: ['panic: no config'],
      },
    ]);
    expect(lines).toEqual([
      'Pod/a: CrashLoopBackOff: container web exited 1',
      '  last event: BackOff: restarting',
      '  | panic: no config',
    ]);
    const many = Array.from({ length: 10 }, (_, i) => ({ object: `Pod/p${i}`, reason: 'NotReady', detail: 'x' }));
    expect(describeProblems(many, 3).at(-1)).toBe('... and 7 more not ready');
  });
});

describe('HopelessTracker', () => {
  it('reports a pod only once it stayed hopeless for the bound, and forgets it when it recovers', () => {
    const t = new HopelessTracker();
    const pull = { object: 'Pod/a', reason: 'ImagePullBackOff', detail: '', container: 'web' };
    const pullErr = { ...pull, reason: 'ErrImagePull' };
    const unsched = { object: 'Pod/b', reason: 'NotReady', detail: '' };
    expect(t.update([pullErr, unsched], 0, 10_000)).toEqual([]);
    expect(t.update([pull, unsched], 6_000, 10_000)).toEqual([]);
    // ErrImagePull and ImagePullBackOff alternate: one continuous hopeless stretch.
    expect(t.update([pull, unsched], 10_000, 10_000)).toEqual([pull]);
    // Fine for longer than the grace (the bound): forgotten, so a new stretch starts from zero.
    expect(t.update([unsched], 11_000, 10_000)).toEqual([]);
    expect(t.update([unsched], 21_000, 10_000)).toEqual([]);
    expect(t.update([pull], 22_000, 10_000)).toEqual([]);
    expect(t.update([pull], 31_000, 10_000)).toEqual([]);
    expect(t.update([pull], 32_000, 10_000)).toEqual([pull]);
  });
  it('a pod no node takes and a workload whose pods the cluster refuses are hopeless after the bound too', () => {
    const t = new HopelessTracker();
    const unsched = { object: 'Pod/b', reason: 'Unschedulable', detail: '' };
    const refused = { object: 'ReplicaSet/web-1', reason: 'FailedCreate', detail: '' };
    const starting = { object: 'Pod/c', reason: 'NotReady', detail: '' };
    expect(t.update([unsched, refused, starting], 0, 5_000)).toEqual([]);
    expect(t.update([unsched, refused, starting], 5_000, 5_000)).toEqual([unsched, refused]);
  });
  it('a crash loop is one stretch although the container shows terminated or running between its back-offs', () => {
    const t = new HopelessTracker();
    // What the real node's kubelet showed for a container that exits 1, poll by poll.
    const backOff = { object: 'Pod/a', reason: 'CrashLoopBackOff', detail: '', container: 'app', restarts: 1 };
    const exited = { object: 'Pod/a', reason: 'Error', detail: '', container: 'app', restarts: 2 };
    const running = { object: 'Pod/a', reason: 'NotReady', detail: '', restarts: 2 };
    expect(t.update([{ ...exited, restarts: 0 }], 0, 15_000)).toEqual([]);
    expect(t.update([backOff], 4_000, 15_000)).toEqual([]);
    // Running and even Ready for a moment (no problem at all), then not ready again.
    expect(t.update([], 6_000, 15_000)).toEqual([]);
    expect(t.update([running], 8_000, 15_000)).toEqual([]);
    expect(t.update([exited], 12_000, 15_000)).toEqual([]);
    // Past the bound, but not reported while it shows as exited: only once it is hopeless again.
    expect(t.update([exited], 19_000, 15_000)).toEqual([]);
    expect(t.update([{ ...backOff, restarts: 2 }], 23_000, 15_000)).toEqual([{ ...backOff, restarts: 2 }]);
  });
  it('a pod that crashed once and then became ready is forgotten; a first crash alone does not start the clock', () => {
    const t = new HopelessTracker();
    const backOff = { object: 'Pod/a', reason: 'CrashLoopBackOff', detail: '', container: 'app', restarts: 1 };
    expect(t.update([{ object: 'Pod/a', reason: 'Error', detail: '', container: 'app' }], 0, 10_000)).toEqual([]);
    expect(t.update([backOff], 1_000, 10_000)).toEqual([]);
    expect(t.update([], 5_000, 10_000)).toEqual([]);
    expect(t.update([], 12_000, 10_000)).toEqual([]);
    expect(t.update([backOff], 13_000, 10_000)).toEqual([]);
    expect(t.update([backOff], 23_000, 10_000)).toEqual([backOff]);
  });
});

describe('pollPlan', () => {
  it('a whole number of reads per progress interval, fail fast within a quarter of its bound, never more than a read per second', () => {
    expect(pollPlan(30_000, 90_000)).toEqual({ pollMs: 5_000, logEveryMs: 30_000 });
    expect(pollPlan(5_000, 15_000)).toEqual({ pollMs: 2_500, logEveryMs: 5_000 });
    expect(pollPlan(30_000, Number.POSITIVE_INFINITY)).toEqual({ pollMs: 5_000, logEveryMs: 30_000 });
    expect(pollPlan(1, 1)).toEqual({ pollMs: 1_000, logEveryMs: 1_000 });
    // --progress-interval 0: no progress lines; still read for failing fast.
    expect(pollPlan(0, 90_000)).toEqual({ pollMs: 5_000, logEveryMs: Number.POSITIVE_INFINITY });
  });
});

describe('matches', () => {
  it('matchLabels and matchExpressions', () => {
    expect(matches({ matchLabels: { app: 'web' } }, { app: 'web', x: '1' })).toBe(true);
    expect(matches({ matchLabels: { app: 'web' } }, { app: 'db' })).toBe(false);
    expect(matches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] }, { tier: 'b' })).toBe(
      true,
    );
    expect(matches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] }, { tier: 'a' })).toBe(
      false,
    );
    expect(matches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, {})).toBe(true);
  });
});

describe('nextPollDelay', () => {
  it('keeps the planned interval while a read is quick, spaces reads to ten times their duration when slow, at most 30 s', () => {
    expect(nextPollDelay(5_000, 80)).toBe(5_000);
    expect(nextPollDelay(5_000, 500)).toBe(5_000);
    expect(nextPollDelay(5_000, 1_200)).toBe(12_000);
    expect(nextPollDelay(2_500, 9_000)).toBe(30_000);
    expect(nextPollDelay(1_000, 0)).toBe(1_000);
  });
});
