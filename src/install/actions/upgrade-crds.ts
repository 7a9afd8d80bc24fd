// Action step "CRDs", before helm's install or upgrade, under the Lease (src/crds/ says what and
// why). A render without a CRD loads none of it and asks the cluster nothing.
import type { CrdOutcome } from '../../crds/upgrade-crds.js';
import type { ReleaseLease } from '../../cluster/release-lease.js';
import type { ClusterRun, InstallRun } from '../run-context.js';

export async function upgradeChartCrds(run: InstallRun, cluster: ClusterRun, manifests: string, lease: ReleaseLease): Promise<CrdOutcome | undefined> {
  if (!manifests.includes('CustomResourceDefinition')) return undefined;
  run.stage('CRDs');
  const { upgradeCrds } = await import('../../crds/upgrade-crds.js');
  return upgradeCrds({
    kube: cluster.kube,
    manifests,
    policy: run.o.crds,
    release: { name: run.release, namespace: cluster.namespace },
    skipPreflight: run.o.skipPreflight,
    logger: run.logger,
    signal: AbortSignal.any([run.signal, lease.lost]),
  });
}
