// Is the deployed release healthy? Its Deployments, StatefulSets and DaemonSets in the release
// namespace (found by helm's ownership annotations, three list calls whatever the chart's size)
// have rolled out and are ready. Used only to allow skipping an unchanged redeploy: a release
// that is not healthy gets the upgrade (and helm's wait) instead.
import type { V1DaemonSet, V1Deployment, V1StatefulSet } from '@kubernetes/client-node';
import type { KubeClients } from './kube-client.js';
import { toInstallerApiError, withCallTimeout } from './kube-errors.js';

type Workload = V1Deployment | V1StatefulSet | V1DaemonSet;

export function ownedByRelease(
  o: { metadata?: { annotations?: Record<string, string> } },
  release: string,
  namespace: string,
): boolean {
  const a = o.metadata?.annotations ?? {};
  return a['meta.helm.sh/release-name'] === release && a['meta.helm.sh/release-namespace'] === namespace;
}

/** Pure: why a workload is not ready, or undefined when it is. */
export function workloadUnready(kind: 'Deployment' | 'StatefulSet' | 'DaemonSet', w: Workload): string | undefined {
  const generation = w.metadata?.generation ?? 0;
  const observed = w.status?.observedGeneration ?? 0;
  if (observed < generation) return 'rollout not observed yet';
  if (kind === 'DaemonSet') {
    const s = (w as V1DaemonSet).status;
    const want = s?.desiredNumberScheduled ?? 0;
    if ((s?.updatedNumberScheduled ?? 0) < want || (s?.numberReady ?? 0) < want)
      return `${s?.numberReady ?? 0}/${want} ready`;
    return undefined;
  }
  const want = (w as V1Deployment).spec?.replicas ?? 1;
  const s = (w as V1Deployment | V1StatefulSet).status;
  if ((s?.updatedReplicas ?? 0) < want || (s?.readyReplicas ?? 0) < want)
    return `${s?.readyReplicas ?? 0}/${want} ready`;
  if (kind === 'Deployment' && (s?.replicas ?? 0) > want) return 'old replicas still running';
  return undefined;
}

/** Every unready workload of the release, as `Kind/name: why`. */
export async function unreadyWorkloads(kube: KubeClients, namespace: string, release: string): Promise<string[]> {
  try {
    const [deployments, statefulSets, daemonSets] = await withCallTimeout(
      Promise.all([
        kube.apps.listNamespacedDeployment({ namespace }),
        kube.apps.listNamespacedStatefulSet({ namespace }),
        kube.apps.listNamespacedDaemonSet({ namespace }),
      ]),
    );
    const out: string[] = [];
    for (const [kind, items] of [
      ['Deployment', deployments.items],
      ['StatefulSet', statefulSets.items],
      ['DaemonSet', daemonSets.items],
    ] as const) {
      for (const w of items as Workload[]) {
        if (!ownedByRelease(w, release, namespace)) continue;
        const why = workloadUnready(kind, w);
        if (why) out.push(`${kind}/${w.metadata?.name}: ${why}`);
      }
    }
    return out;
  } catch (err) {
    throw toInstallerApiError(err, `reading the workloads of release ${release}`, kube.server);
  }
}
