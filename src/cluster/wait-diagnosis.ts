// What helm is waiting for, and why it is not ready: the release's pods (through the selectors of
// its Deployments, StatefulSets, DaemonSets and hook Jobs) read while helm waits, for progress
// lines at intervals, for failing fast when a pod stays in a state that waiting cannot fix
// (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, Unschedulable) or the cluster refuses to
// create the pods at all (FailedCreate: Pod Security, a quota, a LimitRange, an admission policy),
// and for the failure summary (each unready object, its reason, its latest Event, a crashing
// container's last log lines, the way out of a refusal). Pure classification; the reads are a few
// list calls per round.
import type {
  CoreV1Event,
  V1DaemonSet,
  V1Deployment,
  V1Job,
  V1LabelSelector,
  V1Pod,
  V1ReplicaSet,
  V1StatefulSet,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeClients } from './kube-client.js';
import { withCallTimeout } from './kube-errors.js';
import { classifyRefusal, type RefusalKind } from './refusal-cause.js';
import { markScalingUp, refusedWorkloads } from './refused-workloads.js';
import { ownedByRelease } from './workload-health.js';

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

/** Reads the release's pods and hook Jobs now and classifies each unready one. */
export async function readProblems(
  s: DiagnosisScope,
  o: { withEvents?: boolean; withLogs?: boolean } = {},
  /** Filled with how many of the release's workloads and Jobs were found. */
  found: { objects: number } = { objects: 0 },
): Promise<Problem[]> {
  const { apps, batch, core } = s.kube;
  const namespace = s.namespace;
  const [deployments, statefulSets, daemonSets, jobs, pods, replicaSets, failedCreates] = await withCallTimeout(
    Promise.all([
      apps.listNamespacedDeployment({ namespace }),
      apps.listNamespacedStatefulSet({ namespace }),
      apps.listNamespacedDaemonSet({ namespace }),
      batch.listNamespacedJob({ namespace }),
      core.listNamespacedPod({ namespace }),
      // ReplicaSets and Events are optional reading (a Role may not grant them): without them the
      // pods still say what they say; only the refusals before any pod exists go unseen.
      apps.listNamespacedReplicaSet({ namespace }).catch(() => ({ items: [] as V1ReplicaSet[] })),
      core
        .listNamespacedEvent({ namespace, fieldSelector: 'reason=FailedCreate' })
        .catch(() => ({ items: [] as CoreV1Event[] })),
    ]),
  );
  const selectors: V1LabelSelector[] = [];
  for (const w of [...deployments.items, ...statefulSets.items, ...daemonSets.items]) {
    if (ownedByRelease(w, s.release, namespace) && w.spec?.selector) selectors.push(w.spec.selector);
  }
  const ours = (j: V1Job) =>
    ownedByRelease(j, s.release, namespace) ||
    (j.metadata?.annotations?.['helm.sh/hook'] !== undefined &&
      new Date(j.metadata?.creationTimestamp ?? 0).getTime() >= s.since - 5000);
  const releaseJobs = jobs.items.filter(ours);
  found.objects = selectors.length + releaseJobs.length;
  const jobNames = new Set(releaseJobs.map((j) => j.metadata?.name));
  let problems: Problem[] = releaseJobs.map(jobProblem).filter((p): p is Problem => p !== undefined);
  const failedJobs = new Set(problems.map((p) => p.object.slice('Job/'.length)));
  const mine = <T extends V1StatefulSet | V1DaemonSet | V1Deployment>(items: T[]) =>
    items.filter((w) => ownedByRelease(w, s.release, namespace));
  problems.push(
    ...refusedWorkloads({
      namespace,
      deployments: new Set(mine(deployments.items).map((d) => d.metadata?.name ?? '')),
      replicaSets: replicaSets.items,
      statefulSets: mine(statefulSets.items),
      daemonSets: mine(daemonSets.items),
      jobs: releaseJobs.filter((j) => !failedJobs.has(j.metadata?.name ?? '')),
      events: failedCreates.items,
      since: s.since - 5000,
    }),
  );
  const jobPods: V1Pod[] = [];
  for (const pod of pods.items) {
    const owner = pod.metadata?.ownerReferences?.find((r) => r.kind === 'Job')?.name;
    if (owner && jobNames.has(owner)) {
      jobPods.push(pod);
      continue;
    }
    if (pod.metadata?.deletionTimestamp) continue;
    if (!selectors.some((sel) => matches(sel, pod.metadata?.labels ?? {}))) continue;
    const p = podProblem(pod);
    if (p) problems.push(p);
  }
  // A Job's pods matter while the Job runs, and for a failed Job (its log says why).
  for (const pod of jobPods) {
    const owner = pod.metadata?.ownerReferences?.find((r) => r.kind === 'Job')?.name ?? '';
    const p = podProblem(pod);
    if (p && (p.reason !== 'NotReady' || failedJobs.has(owner))) problems.push(p);
  }
  if (problems.some((p) => p.reason === 'Unschedulable')) {
    const scaling = await withCallTimeout(
      core.listNamespacedEvent({ namespace, fieldSelector: 'reason=TriggeredScaleUp' }),
    ).catch(() => ({ items: [] as CoreV1Event[] }));
    problems = markScalingUp(problems, scaling.items, Date.now());
  }
  if (o.withEvents && problems.length > 0) {
    const events = await withCallTimeout(core.listNamespacedEvent({ namespace })).catch(() => undefined);
    const latest = latestEvents(events?.items ?? []);
    // A refusal's Event repeats the message it already carries.
    for (const p of problems) if (p.reason !== 'FailedCreate') p.event = latest.get(p.object);
  }
  if (o.withLogs) {
    for (const p of problems.filter(
      (x) =>
        x.object.startsWith('Pod/') &&
        x.container &&
        !['ErrImagePull', 'ImagePullBackOff', 'Unschedulable'].includes(x.reason),
    )) {
      // The container's last run: the current one when it is shown terminated, else the previous
      // (a crash loop waiting in its back-off). The kubelet garbage-collects all but the last dead
      // container and then answers with a line of its own instead of the log: not a log line.
      p.logTail =
        (await tail(s, p.object.slice(4), p.container!, false)) ??
        (await tail(s, p.object.slice(4), p.container!, true));
    }
  }
  return problems;
}

/** A container's last log lines (at most 5), or undefined when there are none to read. */
export async function tail(
  s: Pick<DiagnosisScope, 'kube' | 'namespace'>,
  pod: string,
  container: string,
  previous: boolean,
): Promise<string[] | undefined> {
  try {
    const text = await withCallTimeout(
      s.kube.core.readNamespacedPodLog({
        name: pod,
        namespace: s.namespace,
        container,
        previous,
        tailLines: 5,
        limitBytes: 4096,
      }),
      5000,
    );
    const lines = String(text)
      .split('\n')
      .map((l) => l.slice(0, 200))
      .filter((l) => l.trim())
      .slice(-5);
    if (lines.length === 0 || (lines.length === 1 && /^unable to retrieve container logs for /.test(lines[0]!)))
      return undefined;
    return lines;
  } catch {
    return undefined;
  }
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

export interface WaitWatch {
  /** Set when a pod stayed hopeless past the bound: helm was asked to stop. */
  readonly failedFast?: Problem[];
  /** The latest problems seen with events and logs (helm's rollback may remove the pods). */
  readonly lastSeen: Problem[];
  stop(): void;
}

/**
 * While helm waits: every intervalMs logs what is not ready and why; when a pod stays in a
 * hopeless state for failFastMs, calls onHopeless (the caller stops helm, which rolls back).
 */
export function watchWhileHelmWaits(
  scope: DiagnosisScope,
  o: { intervalMs: number; failFastMs: number; logger: Logger; onHopeless: (problems: Problem[]) => void },
): WaitWatch {
  const tracker = new HopelessTracker();
  const state: { failedFast?: Problem[]; stopped: boolean; lastLog: number; lastSeen: Problem[] } = {
    stopped: false,
    lastLog: Date.now(),
    lastSeen: [],
  };
  // Polls faster than it logs, so the fail-fast bound is kept to a few seconds; a whole number of
  // polls per progress interval, so progress lines come at the interval asked for.
  // Never more than a read per second, whatever was asked; an interval of 0 logs no progress.
  const { pollMs, logEveryMs } = pollPlan(o.intervalMs, o.failFastMs);
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    if (state.stopped) return;
    const began = Date.now();
    try {
      const found = { objects: 0 };
      const problems = await readProblems(scope, {}, found);
      const now = Date.now();
      const hopeless = tracker.update(problems, now, o.failFastMs);
      if (hopeless.length > 0 && !state.failedFast) {
        // The hopeless state as seen, with the Events and log lines of a second read (by then a
        // crash-looping container may show as terminated again: its reason stays the one seen).
        const detailed = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
        state.failedFast = hopeless.map((p) => {
          const d =
            detailed.find((x) => x.object === p.object && x.container === p.container) ??
            detailed.find((x) => x.object === p.object);
          return { ...p, event: d?.event, logTail: d?.logTail };
        });
        o.logger.error(
          { notReady: describeProblems(state.failedFast) },
          `failing fast: ${state.failedFast[0]!.object} stayed ${state.failedFast[0]!.reason} for ${Math.round(o.failFastMs / 1000)}s; stopping helm (it rolls back)`,
        );
        o.onHopeless(state.failedFast);
        return;
      }
      // What was not ready is kept for the failure summary: helm's rollback removes the objects
      // before helm exits, so a read after it (or a round in between) finds nothing. Cleared only
      // when the release's objects are there and ready; refreshed every round, with the Events
      // and log lines of the last detailed read kept for the same objects.
      if (problems.length === 0 && found.objects > 0) state.lastSeen = [];
      else if (problems.length > 0) {
        const before = new Map(state.lastSeen.map((p) => [`${p.object}/${p.container ?? ''}`, p]));
        state.lastSeen = problems.map((p) => {
          const seen = before.get(`${p.object}/${p.container ?? ''}`);
          return seen ? { ...p, event: seen.event, logTail: seen.logTail } : p;
        });
      }
      if (now - state.lastLog >= logEveryMs) {
        state.lastLog = now;
        if (problems.length > 0) {
          const detailed = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
          if (detailed.length > 0) state.lastSeen = detailed;
          o.logger.info({ notReady: describeProblems(state.lastSeen) }, `waiting: ${problems.length} not ready`);
        } else o.logger.info('waiting: every pod of the release is ready; helm is finishing');
      }
    } catch (err) {
      o.logger.debug({ cause: (err as Error).message?.split('\n')[0] }, 'progress read failed');
    } finally {
      if (!state.stopped && !state.failedFast)
        timer = setTimeout(() => void round(), nextPollDelay(pollMs, Date.now() - began));
    }
  };
  timer = setTimeout(() => void round(), pollMs);
  return {
    get failedFast() {
      return state.failedFast;
    },
    get lastSeen() {
      return state.lastSeen;
    },
    stop() {
      state.stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
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
