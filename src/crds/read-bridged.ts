// The CRDs a run left as intermediate CRDs (bridged.ts): killed after helm's upgrade and before the
// CRDs' last step, it left the release deployed with the very inputs the next run brings, and
// the CRDs still serving the versions the chart drops. The revision that run made carries
// CRDS_BRIDGED_RELEASE_LABEL, so only a run that finds it asks the cluster (one list); every
// other unchanged redeploy costs no call.
import type { KubeClients } from '../cluster/kube-client.js';
import { toInstallerApiError } from '../cluster/kube-errors.js';
import { objectClient } from '../cluster/object-client.js';
import { BRIDGED_LABEL } from './bridged.js';
import { CRD_PATH } from './migrate-storage.js';

/** On a revision whose upgrade applied intermediate CRDs. */
export const CRDS_BRIDGED_RELEASE_LABEL = 'helm-installer/crds-bridged';

/** The names of the CRDs still applied as intermediate CRDs by this release. */
export async function bridgedCrds(kube: KubeClients, release: string, signal?: AbortSignal): Promise<string[]> {
  try {
    const client = await objectClient(kube, signal);
    const list = await client.list(CRD_PATH, { labelSelector: `${BRIDGED_LABEL}=${release}` });
    const items = Array.isArray(list.items) ? (list.items as { metadata?: { name?: string } }[]) : [];
    return items.map((i) => String(i.metadata?.name ?? '')).filter((n) => n !== '');
  } catch (err) {
    throw toInstallerApiError(err, `reading the CRDs release ${release} left mid-migration`, kube.server);
  }
}

/** Pure: such a CRD as the state's reason to upgrade (ReleaseState.unready). */
export function unfinishedCrd(name: string): string {
  return `CustomResourceDefinition/${name}: still serves the versions its chart drops (a run stopped after helm's upgrade, before the CRDs' last step)`;
}
