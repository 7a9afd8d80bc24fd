// What helm is waiting for, and why it is not ready: pure classification of the release's pods
// (through the selectors of its Deployments, StatefulSets, DaemonSets and hook Jobs), for progress
// lines at intervals, for failing fast when a pod stays in a state that waiting cannot fix
// (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, Unschedulable) or the cluster refuses to
// create the pods at all (FailedCreate: Pod Security, a quota, a LimitRange, an admission policy),
// and for the failure summary (each unready object, its reason, its latest Event, a crashing
// container's last log lines, the way out of a refusal). The reads (a few list calls per round)
// are read-problems.ts; the rounds while helm waits, wait-watch.ts.
import type { CoreV1Event, V1Job, V1LabelSelector, V1Pod } from '@kubernetes/client-node';
import type { KubeClients } from './kube-client.js';
import { classifyRefusal, type RefusalKind } from './refusal-cause.js';

/**
 * Waiting reasons that more waiting does not fix. A pod no node can take (Unschedulable) and pods
 * the cluster refuses to create (FailedCreate) wait for a change someone has to make too.
 */
const HOPELESS_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'CrashLoopBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'Unschedulable',
  'FailedCreate',
]);

export interface Problem {
  /** `Pod/name` or `Job/name`. */
  object: string;
  /** ImagePullBackOff, CrashLoopBackOff, Unschedulable, BackoffLimitExceeded, ... */
  reason: string;
  /** One line: the image, the container and exit code, the scheduler's message. */
  detail: string;
  container?: string;
  /** The most restarts of any container of the pod (a crash loop restarts it again and again). */
  restarts?: number;
  /** The latest Event on the object, `Reason: message`. */
  event?: string;
  logTail?: string[];
  /** A refusal's kind and the way out, one short line each (classifyRefusal). */
  refusal?: RefusalKind;
  wayOut?: string[];
}

/** Pure: why one pod is not ready, or undefined when it is ready or done. */
export function podProblem(pod: V1Pod): Problem | undefined {
  const problem = podProblemNow(pod);
  const restarts = Math.max(
    0,
    ...[...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])].map(
      (c) => c.restartCount ?? 0,
    ),
  );
  return problem && restarts > 0 ? { ...problem, restarts } : problem;
}

function podProblemNow(pod: V1Pod): Problem | undefined {
  const object = `Pod/${pod.metadata?.name}`;
  if (pod.status?.phase === 'Succeeded') return undefined;
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && waiting.reason !== 'ContainerCreating' && waiting.reason !== 'PodInitializing') {
      const image = ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName'].includes(waiting.reason);
      const last = c.lastState?.terminated;
      const detail = image
        ? `image ${c.image}${waiting.message ? `: ${oneLine(waiting.message)}` : ''}`
        : `container ${c.name}${last ? ` exited ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` : ''}, restarted ${c.restartCount} times${waiting.message && !last ? `: ${oneLine(waiting.message)}` : ''}`;
      return { object, reason: waiting.reason, detail, container: c.name };
    }
    const terminated = c.state?.terminated;
    // Between its back-offs the kubelet shows a crash-looping container as terminated (Error),
    // for seconds at a time: once it has been restarted, that is the crash loop too.
    if (terminated && terminated.exitCode !== 0 && (c.restartCount ?? 0) > 0 && pod.spec?.restartPolicy !== 'Never') {
      return {
        object,
        reason: 'CrashLoopBackOff',
        detail: `container ${c.name} exited ${terminated.exitCode}${terminated.reason ? ` (${terminated.reason})` : ''}, restarted ${c.restartCount} times`,
        container: c.name,
      };
    }
    if (terminated && terminated.exitCode !== 0) {
      return {
        object,
        reason: terminated.reason ?? 'Error',
        detail: `container ${c.name} exited ${terminated.exitCode}${terminated.message ? `: ${oneLine(terminated.message)}` : ''}`,
        container: c.name,
      };
    }
  }
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    const detail = oneLine(scheduled.message ?? 'not scheduled', 600);
    if (scheduled.reason !== 'Unschedulable') return { object, reason: scheduled.reason ?? 'Unschedulable', detail };
    const r = classifyRefusal(detail, {
      namespace: pod.metadata?.namespace ?? '',
      nodeSelector: pod.spec?.nodeSelector,
    });
    return { object, reason: 'Unschedulable', detail, refusal: r.kind, wayOut: r.wayOut };
  }
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
  if (pod.status?.phase === 'Failed')
    return { object, reason: pod.status.reason ?? 'Failed', detail: oneLine(pod.status.message ?? 'pod failed') };
  if (ready?.status !== 'True')
    return { object, reason: 'NotReady', detail: oneLine(ready?.message ?? `phase ${pod.status?.phase ?? 'unknown'}`) };
  return undefined;
}

/** Pure: a failed Job (a hook, usually), or undefined. */
export function jobProblem(job: V1Job): Problem | undefined {
  const failed = job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  return failed
    ? {
        object: `Job/${job.metadata?.name}`,
        reason: failed.reason ?? 'Failed',
        detail: oneLine(failed.message ?? 'job failed'),
      }
    : undefined;
}

/** Pure: the newest Event per involved object, as `Reason: message`. */
export function latestEvents(events: CoreV1Event[]): Map<string, string> {
  const at = (e: CoreV1Event) =>
    new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0).getTime();
  const newest = new Map<string, CoreV1Event>();
  for (const e of events) {
    const key = `${e.involvedObject?.kind}/${e.involvedObject?.name}`;
    const seen = newest.get(key);
    if (!seen || at(e) >= at(seen)) newest.set(key, e);
  }
  return new Map([...newest].map(([k, e]) => [k, `${e.reason}: ${oneLine(e.message ?? '')}`]));
}

/** Pure: the summary lines for a set of problems (at most `max`). */
export function describeProblems(problems: Problem[], max = 8): string[] {
  const lines: string[] = [];
  for (const p of problems.slice(0, max)) {
    lines.push(`${p.object}: ${p.reason}: ${p.detail}`);
    if (p.event) lines.push(`  last event: ${p.event}`);
    for (const [i, l] of (p.wayOut ?? []).entries()) lines.push(`  ${i === 0 ? 'way out: ' : '  '}${l}`);
    for (const l of p.logTail ?? []) lines.push(`  | ${l}`);
  }
  if (problems.length > max) lines.push(`... and ${problems.length - max} more not ready`);
  return lines;
}

/**
 * Pure bookkeeping for failing fast: since when each pod has been in a hopeless state. A crash
 * loop is one stretch although the kubelet shows the container terminated (`Error`) for seconds
 * and then running between its back-offs, even Ready for a moment (no readiness probe), often for
 * seconds under load: a pod that was hopeless stays tracked while it is not ready and has
 * restarted, and is forgotten only once it has been fine for the grace (the bound, at most 30 s).
 * It is reported in a round that finds it hopeless again.
 */
export class HopelessTracker {
  private readonly since = new Map<string, number>();
  private readonly seen = new Map<string, number>();

  /** Records this round; returns the problems hopeless for longer than boundMs. */
  update(problems: Problem[], now: number, boundMs: number): Problem[] {
    for (const p of problems) {
      const tracked = this.since.has(p.object);
      if (!HOPELESS_REASONS.has(p.reason) && !(tracked && (p.restarts ?? 0) > 0)) continue;
      this.seen.set(p.object, now);
      if (!tracked) this.since.set(p.object, now);
    }
    const graceMs = Math.min(boundMs, 30_000);
    for (const [key, at] of [...this.seen]) {
      if (now - at > graceMs) {
        this.seen.delete(key);
        this.since.delete(key);
      }
    }
    return problems.filter((p) => {
      const t = this.since.get(p.object);
      return HOPELESS_REASONS.has(p.reason) && t !== undefined && now - t >= boundMs;
    });
  }
}

export interface DiagnosisScope {
  kube: KubeClients;
  namespace: string;
  release: string;
  /** Hook Jobs created before this (earlier runs) are not ours. */
  since: number;
}

/** Pure: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist). */
export function matches(selector: V1LabelSelector, labels: Record<string, string>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    if (e.operator === 'In' && !(has && (e.values ?? []).includes(labels[e.key]!))) return false;
    if (e.operator === 'NotIn' && has && (e.values ?? []).includes(labels[e.key]!)) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

/** Pure: how often to read (fail fast within a few seconds) and to log (at the interval asked). */
export function pollPlan(intervalMs: number, failFastMs: number): { pollMs: number; logEveryMs: number } {
  const wanted = Math.max(1000, Math.min(5000, failFastMs / 4));
  if (!(intervalMs > 0)) return { pollMs: wanted, logEveryMs: Number.POSITIVE_INFINITY };
  const logEveryMs = Math.max(1000, intervalMs);
  return { pollMs: logEveryMs / Math.ceil(logEveryMs / Math.min(logEveryMs, wanted)), logEveryMs };
}

/**
 * Pure: the delay before the next read, given how long the last one took. Reading a large release
 * (a chart of 1000 Deployments: lists of thousands of objects the API server serializes and the
 * client parses, a second or more under load) every few seconds took a good part of the CPU that
 * helm and the cluster need; reads are spaced so they take at most a tenth of the time, and at
 * most 30 s apart (fail-fast then answers within one more read). A small release keeps pollMs.
 */
export function nextPollDelay(pollMs: number, lastReadMs: number): number {
  return Math.max(pollMs, Math.min(30_000, lastReadMs * 10));
}

function oneLine(s: string, max = 240): string {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > max ? `${l.slice(0, max - 3)}...` : l;
}
