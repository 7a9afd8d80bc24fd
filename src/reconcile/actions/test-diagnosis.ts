// Why each test hook that did not succeed failed, read from the cluster after `helm test`: the
// pod's exit code and last log lines, as a failed wait names them. A pod still running when
// --test-timeout ran out counts as failed (TestTimeout) and is deleted: helm leaves it running,
// and it would go on testing a release that may be rolled back under it.
import type { V1Pod } from '@kubernetes/client-node';
import { isNotFound, withCallTimeout } from '../../cluster/kube-errors.js';
import { tail } from '../../cluster/read-problems.js';
import { podProblem, type Problem } from '../../cluster/wait-diagnosis.js';
import type { TestRun } from '../../helm/helm-results.js';
import type { InstallRun } from '../install-run.js';
import type { ClusterRun } from '../../run/run-context.js';

export const TEST_TIMEOUT_REASON = 'TestTimeout';

/** One problem per test that did not succeed, in helm's order. */
export async function diagnoseTests(run: InstallRun, cluster: ClusterRun, runs: TestRun[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const r of runs.filter((x) => x.phase !== 'Succeeded')) {
    const pod = await readPod(cluster, r.name);
    if (typeof pod === 'string') {
      problems.push({ object: `test ${r.name}`, reason: r.phase, detail: pod });
      continue;
    }
    const p = testProblem(pod, run.o.testTimeout) ?? {
      object: `Pod/${r.name}`,
      reason: r.phase,
      detail: `helm reported it ${r.phase}`,
    };
    if (p.container) p.logTail = await tail(cluster, r.name, p.container, false);
    if (p.reason === TEST_TIMEOUT_REASON) await deletePod(run, cluster, r.name);
    problems.push(p);
  }
  return problems;
}

/**
 * Pure: why a test pod did not succeed. A pod that has not finished ran out of time; the waiting
 * reason of a container that never started (an image pull) is named with it.
 */
export function testProblem(pod: V1Pod, timeout: string): Problem | undefined {
  const phase = pod.status?.phase ?? 'Unknown';
  const p = podProblem(pod);
  if (phase === 'Succeeded' || phase === 'Failed') return p;
  const running = pod.status?.containerStatuses?.find((c) => c.state?.running)?.name;
  const why = p && p.reason !== 'NotReady' ? ` (${p.reason}: ${p.detail})` : '';
  return {
    object: `Pod/${pod.metadata?.name}`,
    reason: TEST_TIMEOUT_REASON,
    detail: `still ${phase}${why} when --test-timeout ${timeout} ran out`,
    container: p?.container ?? running ?? pod.spec?.containers[0]?.name,
  };
}

/** The test's pod, or why there is none to read. */
async function readPod(cluster: ClusterRun, name: string): Promise<V1Pod | string> {
  try {
    return await withCallTimeout(cluster.kube.core.readNamespacedPod({ name, namespace: cluster.namespace }));
  } catch (error) {
    // A Job or another kind, or a pod its helm.sh/hook-delete-policy (hook-failed) removed.
    if (isNotFound(error)) return 'no pod of that name left to read (deleted by its hook-delete-policy, or not a Pod)';
    return `its pod could not be read: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
  }
}

/** Best effort: a pod left running is a warning, not a second failure. */
async function deletePod(run: InstallRun, cluster: ClusterRun, name: string): Promise<void> {
  try {
    await withCallTimeout(
      cluster.kube.core.deleteNamespacedPod({ name, namespace: cluster.namespace, gracePeriodSeconds: 1 }),
    );
    run.logger.info({ pod: name }, 'test pod still running at --test-timeout: deleted');
  } catch (error) {
    run.logger.warn(
      { pod: name, cause: error instanceof Error ? error.message.split('\n')[0] : String(error) },
      'could not delete a test pod still running at --test-timeout',
    );
  }
}
