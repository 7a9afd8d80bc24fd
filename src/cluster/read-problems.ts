// The reads behind what helm is waiting for: the release's workloads, hook Jobs and pods in a few
// list calls, classified by wait-diagnosis.ts; the refusals before any pod exists (ReplicaSets,
// FailedCreate Events), a cluster autoscaler's scale-up, and on request each problem's latest
// Event and a crashing container's last log lines.
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
import { withCallTimeout } from './kube-errors.js';
import { markScalingUp, refusedWorkloads } from './refused-workloads.js';
import { type DiagnosisScope, jobProblem, latestEvents, matches, podProblem, type Problem } from './wait-diagnosis.js';
import { ownedByRelease } from './workload-health.js';

/** Reads the release's pods and hook Jobs now and classifies each unready one. */
export async function readProblems(
  s: DiagnosisScope,
  o: { withEvents?: boolean; withLogs?: boolean } = {},
  /** Filled with how many of the release's workloads and Jobs were found. */
  found: { objects: number } = { objects: 0 },
): Promise<Problem[]> {
  let problems = releaseProblems(s, await listNamespace(s), found);
  if (problems.some((p) => p.reason === 'Unschedulable')) {
    const scaling = await withCallTimeout(
      s.kube.core.listNamespacedEvent({ namespace: s.namespace, fieldSelector: 'reason=TriggeredScaleUp' }),
    ).catch(() => ({ items: [] as CoreV1Event[] }));
    problems = markScalingUp(problems, scaling.items, Date.now());
  }
  if (o.withEvents && problems.length > 0) await addEvents(s, problems);
  if (o.withLogs) await addLogTails(s, problems);
  return problems;
}

/** The namespace's workloads, Jobs and pods, and what tells a refusal before any pod: read at once. */
async function listNamespace(s: DiagnosisScope) {
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
  return {
    deployments: deployments.items,
    statefulSets: statefulSets.items,
    daemonSets: daemonSets.items,
    jobs: jobs.items,
    pods: pods.items,
    replicaSets: replicaSets.items,
    failedCreates: failedCreates.items,
  };
}

type NamespaceLists = Awaited<ReturnType<typeof listNamespace>>;

/** Pure: the release's failed Jobs, refused workloads and unready pods, in that order. */
function releaseProblems(s: DiagnosisScope, lists: NamespaceLists, found: { objects: number }): Problem[] {
  const namespace = s.namespace;
  const selectors: V1LabelSelector[] = [];
  for (const w of [...lists.deployments, ...lists.statefulSets, ...lists.daemonSets]) {
    if (ownedByRelease(w, s.release, namespace) && w.spec?.selector) selectors.push(w.spec.selector);
  }
  const ours = (j: V1Job) =>
    ownedByRelease(j, s.release, namespace) ||
    (j.metadata?.annotations?.['helm.sh/hook'] !== undefined &&
      new Date(j.metadata?.creationTimestamp ?? 0).getTime() >= s.since - 5000);
  const releaseJobs = lists.jobs.filter(ours);
  found.objects = selectors.length + releaseJobs.length;
  const problems: Problem[] = releaseJobs.map(jobProblem).filter((p): p is Problem => p !== undefined);
  const failedJobs = new Set(problems.map((p) => p.object.slice('Job/'.length)));
  const mine = <T extends V1StatefulSet | V1DaemonSet | V1Deployment>(items: T[]) =>
    items.filter((w) => ownedByRelease(w, s.release, namespace));
  problems.push(
    ...refusedWorkloads({
      namespace,
      deployments: new Set(mine(lists.deployments).map((d) => d.metadata?.name ?? '')),
      replicaSets: lists.replicaSets,
      statefulSets: mine(lists.statefulSets),
      daemonSets: mine(lists.daemonSets),
      jobs: releaseJobs.filter((j) => !failedJobs.has(j.metadata?.name ?? '')),
      events: lists.failedCreates,
      since: s.since - 5000,
    }),
  );
  const jobNames = new Set(releaseJobs.map((j) => j.metadata?.name));
  problems.push(...podProblems(lists.pods, selectors, jobNames, failedJobs));
  return problems;
}

/** Pure: the unready pods of the release's workloads, then those of its Jobs that matter. */
function podProblems(
  pods: V1Pod[],
  selectors: V1LabelSelector[],
  jobNames: Set<string | undefined>,
  failedJobs: Set<string>,
): Problem[] {
  const problems: Problem[] = [];
  const jobPods: V1Pod[] = [];
  for (const pod of pods) {
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
  return problems;
}

/** Each problem's latest Event, `Reason: message`; a refusal's Event repeats the message it already carries. */
async function addEvents(s: DiagnosisScope, problems: Problem[]): Promise<void> {
  const events = await withCallTimeout(s.kube.core.listNamespacedEvent({ namespace: s.namespace })).catch(
    () => undefined,
  );
  const latest = latestEvents(events?.items ?? []);
  for (const p of problems) if (p.reason !== 'FailedCreate') p.event = latest.get(p.object);
}

/** The last log lines of each problem container that ran (not one whose image never came, nor an unscheduled pod). */
async function addLogTails(s: DiagnosisScope, problems: Problem[]): Promise<void> {
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
      (await tail(s, p.object.slice(4), p.container!, false)) ?? (await tail(s, p.object.slice(4), p.container!, true));
  }
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
