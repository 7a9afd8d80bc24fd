// The release's workloads whose pods the cluster refuses to create: a ReplicaSet (of one of the
// release's Deployments) with the ReplicaFailure condition its controller sets on a failed create,
// and a StatefulSet, DaemonSet or Job short of pods with a FailedCreate Event since the run began
// (those controllers record only the Event). Pure: the lists in, one problem per workload out, its
// message the cluster's own and its way out from classifyRefusal.
import type { CoreV1Event, V1DaemonSet, V1Job, V1ReplicaSet, V1StatefulSet } from '@kubernetes/client-node';
import { classifyRefusal, type RefusalKind } from './refusal-cause.js';

export interface RefusedWorkload {
  /** `ReplicaSet/web-5d8f` (its Deployment in the detail), `StatefulSet/db`, `Job/migrate`. */
  object: string;
  reason: string;
  /** The Deployment that owns a ReplicaSet, then the cluster's message. */
  detail: string;
  refusal: RefusalKind;
  wayOut: string[];
}

export interface ReleaseWorkloads {
  namespace: string;
  /** The names of the release's Deployments (their ReplicaSets are listed unfiltered). */
  deployments: Set<string>;
  replicaSets: V1ReplicaSet[];
  statefulSets: V1StatefulSet[];
  daemonSets: V1DaemonSet[];
  jobs: V1Job[];
  /** FailedCreate Events of the namespace. */
  events: CoreV1Event[];
  /** Events older than this (ms since the epoch) belong to an earlier run. */
  since: number;
}

/** Pure: each of the release's workloads the cluster refuses pods now. */
export function refusedWorkloads(w: ReleaseWorkloads): RefusedWorkload[] {
  const out: RefusedWorkload[] = [];
  for (const rs of w.replicaSets) {
    const owner = rs.metadata?.ownerReferences?.find((r) => r.kind === 'Deployment')?.name;
    if (!owner || !w.deployments.has(owner)) continue;
    const failure = rs.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
    if (!failure || (rs.status?.replicas ?? 0) >= (rs.spec?.replicas ?? 1)) continue;
    out.push(
      refused(
        `ReplicaSet/${rs.metadata?.name}`,
        failure.reason ?? 'FailedCreate',
        failure.message ?? '',
        w.namespace,
        `Deployment/${owner}`,
      ),
    );
  }
  const newest = newestFailedCreate(w.events, w.since);
  const short: [string, boolean][] = [
    ...w.statefulSets.map((s): [string, boolean] => [
      `StatefulSet/${s.metadata?.name}`,
      (s.status?.replicas ?? 0) < (s.spec?.replicas ?? 1),
    ]),
    ...w.daemonSets.map((d): [string, boolean] => [
      `DaemonSet/${d.metadata?.name}`,
      (d.status?.currentNumberScheduled ?? 0) < (d.status?.desiredNumberScheduled ?? 0),
    ]),
    ...w.jobs.map((j): [string, boolean] => [`Job/${j.metadata?.name}`, jobShort(j)]),
  ];
  for (const [object, isShort] of short) {
    const event = newest.get(object);
    if (isShort && event) out.push(refused(object, 'FailedCreate', event.message ?? '', w.namespace));
  }
  return out;
}

function refused(object: string, reason: string, message: string, namespace: string, owner?: string): RefusedWorkload {
  const cause = cleanMessage(message);
  const r = classifyRefusal(cause, { namespace });
  return { object, reason, detail: owner ? `${owner}: ${cause}` : cause, refusal: r.kind, wayOut: r.wayOut };
}

/** A Job not finished with fewer pods running than it runs at once. */
function jobShort(j: V1Job): boolean {
  if (j.status?.conditions?.some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True'))
    return false;
  return (j.status?.active ?? 0) < (j.spec?.parallelism ?? 1);
}

function newestFailedCreate(events: CoreV1Event[], since: number): Map<string, CoreV1Event> {
  const at = (e: CoreV1Event) =>
    new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0).getTime();
  const newest = new Map<string, CoreV1Event>();
  for (const e of events) {
    if (e.reason !== 'FailedCreate' || at(e) < since) continue;
    const key = `${e.involvedObject?.kind}/${e.involvedObject?.name}`;
    const seen = newest.get(key);
    if (!seen || at(e) >= at(seen)) newest.set(key, e);
  }
  return newest;
}

/**
 * Pure: the cluster's words without the controllers' wrapping (`Error creating: `, `create Pod x in
 * StatefulSet y failed error: `), on one line, at most 600 characters.
 */
export function cleanMessage(message: string): string {
  const m = message
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^Error creating: /, '')
    .replace(/^create Pod \S+ in StatefulSet \S+ failed error: /, '');
  return m.length > 600 ? `${m.slice(0, 597)}...` : m;
}

/**
 * Pure: the unschedulable pods a cluster autoscaler is adding a node for (its TriggeredScaleUp
 * Event on the pod, in the last 10 minutes) wait for that node, not for someone's change: their
 * reason becomes ScalingUp, which fail-fast does not stop on (--timeout still bounds the wait).
 */
export function markScalingUp<P extends { object: string; reason: string; detail: string }>(
  problems: P[],
  events: CoreV1Event[],
  now: number,
): P[] {
  const at = (e: CoreV1Event) =>
    new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0).getTime();
  const scaling = new Map<string, CoreV1Event>();
  for (const e of events)
    if (e.reason === 'TriggeredScaleUp' && now - at(e) <= 600_000)
      scaling.set(`${e.involvedObject?.kind}/${e.involvedObject?.name}`, e);
  return problems.map((p) => {
    const e = p.reason === 'Unschedulable' ? scaling.get(p.object) : undefined;
    return e
      ? {
          ...p,
          reason: 'ScalingUp',
          detail: `the cluster autoscaler is adding a node (${cleanMessage(e.message ?? '')}); the scheduler said: ${p.detail}`,
        }
      : p;
  });
}
