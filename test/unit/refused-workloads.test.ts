// Which of the release's workloads the cluster refuses pods now: a ReplicaSet of one of its
// Deployments by its ReplicaFailure condition, a StatefulSet, DaemonSet or Job by a FailedCreate
// Event of this run while it is short of pods.
import { describe, expect, it } from 'vitest';
import { cleanMessage, refusedWorkloads, type ReleaseWorkloads } from '../../src/cluster/refused-workloads.js';
import { describeProblems } from '../../src/cluster/wait-diagnosis.js';

const quota =
  'pods "web-app-5c9-x" is forbidden: exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1';
const quotaWayOut = [
  'ResourceQuota tight has no room: requested pods=1, used pods=1, hard pods=1',
  "raise it (kubectl -n shop edit resourcequota tight), free room in namespace shop, or lower the chart's replicas or resources.requests",
];

const base = (over: Partial<ReleaseWorkloads>): ReleaseWorkloads => ({
  namespace: 'shop',
  deployments: new Set(['web-app']),
  replicaSets: [],
  statefulSets: [],
  daemonSets: [],
  jobs: [],
  events: [],
  since: Date.parse('2026-11-28T10:00:00Z'),
  ...over,
});

const rs = (name: string, owner: string, replicas: number, ready: number, failure?: string) =>
  ({
    metadata: { name, ownerReferences: [{ kind: 'Deployment', name: owner }] },
    spec: { replicas },
    status: {
      replicas: ready,
      conditions: failure ? [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: failure }] : [],
    },
  }) as never;

const event = (kind: string, name: string, message: string, at: string) =>
  ({ reason: 'FailedCreate', involvedObject: { kind, name }, message, lastTimestamp: new Date(at) }) as never;

describe('refusedWorkloads', () => {
  it("a ReplicaSet of the release's Deployment with ReplicaFailure, short of pods: named with its Deployment and the way out", () => {
    expect(
      refusedWorkloads(
        base({
          replicaSets: [
            rs('web-app-5c9', 'web-app', 1, 0, quota),
            rs('other-1', 'other', 1, 0, quota),
            rs('web-app-old', 'web-app', 1, 1, quota),
          ],
        }),
      ),
    ).toEqual([
      {
        object: 'ReplicaSet/web-app-5c9',
        reason: 'FailedCreate',
        detail: `Deployment/web-app: ${quota}`,
        refusal: 'resource-quota',
        wayOut: quotaWayOut,
      },
    ]);
  });
  it("a StatefulSet and a Job short of pods with a FailedCreate Event of this run; the controllers' wrapping dropped", () => {
    const w = base({
      statefulSets: [
        { metadata: { name: 'db' }, spec: { replicas: 1 }, status: { replicas: 0 } } as never,
        { metadata: { name: 'full' }, spec: { replicas: 1 }, status: { replicas: 1 } } as never,
      ],
      jobs: [
        { metadata: { name: 'migrate' }, spec: {}, status: {} } as never,
        { metadata: { name: 'done' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } } as never,
      ],
      events: [
        event('StatefulSet', 'db', `create Pod db-0 in StatefulSet db failed error: ${quota}`, '2026-11-28T10:00:03Z'),
        event(
          'StatefulSet',
          'full',
          `create Pod full-0 in StatefulSet full failed error: ${quota}`,
          '2026-11-28T10:00:03Z',
        ),
        event('Job', 'migrate', `Error creating: ${quota}`, '2026-11-28T10:00:04Z'),
        event('Job', 'done', `Error creating: ${quota}`, '2026-11-28T10:00:04Z'),
      ],
    });
    expect(refusedWorkloads(w)).toEqual([
      {
        object: 'StatefulSet/db',
        reason: 'FailedCreate',
        detail: quota,
        refusal: 'resource-quota',
        wayOut: quotaWayOut,
      },
      { object: 'Job/migrate', reason: 'FailedCreate', detail: quota, refusal: 'resource-quota', wayOut: quotaWayOut },
    ]);
  });
  it("an Event from before the run is not this run's refusal", () => {
    const w = base({
      daemonSets: [
        { metadata: { name: 'agent' }, status: { desiredNumberScheduled: 2, currentNumberScheduled: 0 } } as never,
      ],
      events: [event('DaemonSet', 'agent', `Error creating: ${quota}`, '2026-11-28T09:59:00Z')],
    });
    expect(refusedWorkloads(w)).toEqual([]);
  });
});

describe('the summary lines of a refusal', () => {
  it("the cluster's words, then the way out", () => {
    expect(
      describeProblems([
        { object: 'ReplicaSet/web-app-5c9', reason: 'FailedCreate', detail: quota, wayOut: quotaWayOut },
      ]),
    ).toEqual([
      `ReplicaSet/web-app-5c9: FailedCreate: ${quota}`,
      `  way out: ${quotaWayOut[0]}`,
      `    ${quotaWayOut[1]}`,
    ]);
  });
  it('cleanMessage keeps at most 600 characters on one line', () => {
    expect(cleanMessage(`Error creating: a\n  b ${'x'.repeat(700)}`)).toBe(`a b ${'x'.repeat(593)}...`);
  });
});

describe('parseWarnings', () => {
  it("reads the API server's Warning header, one or several", async () => {
    const { parseWarnings } = await import('../../src/cluster/object-client.js');
    expect(parseWarnings(undefined)).toEqual([]);
    expect(parseWarnings('299 - "would violate PodSecurity \\"restricted:latest\\": runAsNonRoot != true"')).toEqual([
      'would violate PodSecurity "restricted:latest": runAsNonRoot != true',
    ]);
    expect(parseWarnings('299 - "first, with a comma", 299 - "second"')).toEqual(['first, with a comma', 'second']);
  });
});

describe('markScalingUp', () => {
  it('an unschedulable pod a cluster autoscaler is adding a node for waits for it (ScalingUp); others and old Events do not', async () => {
    const { markScalingUp } = await import('../../src/cluster/refused-workloads.js');
    const now = Date.parse('2026-11-28T10:20:00Z');
    const unsched = (name: string) => ({
      object: `Pod/${name}`,
      reason: 'Unschedulable',
      detail: '0/3 nodes are available: 3 Insufficient cpu.',
    });
    const scaleUp = (name: string, at: string) =>
      ({
        reason: 'TriggeredScaleUp',
        involvedObject: { kind: 'Pod', name },
        message: 'pod triggered scale-up: [{pool-a 3->4 (max: 10)}]',
        lastTimestamp: new Date(at),
      }) as never;
    expect(
      markScalingUp(
        [unsched('a'), unsched('b'), unsched('c')],
        [scaleUp('a', '2026-11-28T10:19:00Z'), scaleUp('b', '2026-11-28T10:05:00Z')],
        now,
      ),
    ).toEqual([
      {
        object: 'Pod/a',
        reason: 'ScalingUp',
        detail:
          'the cluster autoscaler is adding a node (pod triggered scale-up: [{pool-a 3->4 (max: 10)}]); the scheduler said: 0/3 nodes are available: 3 Insufficient cpu.',
      },
      unsched('b'),
      unsched('c'),
    ]);
  });
});
