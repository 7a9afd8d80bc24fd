// Nothing provisions volumes here, so claims bind to a pool of pre-created hostPath
// PersistentVolumes of the default StorageClass. Released volumes come back by KWOK's recycle
// stage; volumes held by claims that tests leave behind do not, so every ensureCluster tops
// the pool up to PV_POOL_SIZE available volumes. One full test run leaves 21 claims bound (every
// storefront install keeps its database claim), so the pool holds several runs' worth: at 20 the
// 21st install waited for a volume until its timeout.
import { stringify } from 'yaml';
import { STORAGE_CLASS } from './bootstrap-objects.js';
import { applyYaml, getJson } from './kube.js';
import { PV_POOL_LABEL } from './kwok-stages.js';

const PV_POOL_SIZE = 100;
const PV_CAPACITY = '100Gi';

/** Retain, so a released volume waits for KWOK's recycle stage instead of a deleter that does not exist. */
function poolVolume(index: number): object {
  const name = `pool-pv-${String(index).padStart(3, '0')}`;
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { [PV_POOL_LABEL]: 'true' } },
    spec: {
      capacity: { storage: PV_CAPACITY },
      // ReadWriteOncePod may not be combined with other modes, so claims asking for it do not bind here.
      accessModes: ['ReadWriteOnce', 'ReadWriteMany', 'ReadOnlyMany'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: STORAGE_CLASS,
      volumeMode: 'Filesystem',
      hostPath: { path: `/tmp/helm-installer-pv/${name}` },
    },
  };
}

interface PoolVolume {
  metadata: { name: string };
  spec: { claimRef?: unknown };
  status?: { phase?: string };
}

/** Creates pool volumes until PV_POOL_SIZE are unclaimed; returns how many it created. */
export async function topUpVolumePool(kubeconfig: string): Promise<number> {
  const { items } = await getJson<{ items: PoolVolume[] }>(['get', 'pv', '-l', `${PV_POOL_LABEL}=true`], {
    kubeconfig,
  });
  const free = items.filter((pv) => !pv.spec.claimRef && pv.status?.phase !== 'Failed').length;
  const missing = PV_POOL_SIZE - free;
  if (missing <= 0) return 0;
  const used = new Set(items.map((pv) => pv.metadata.name));
  const fresh: object[] = [];
  for (let i = 0; fresh.length < missing; i++) {
    const pv = poolVolume(i) as { metadata: { name: string } };
    if (!used.has(pv.metadata.name)) fresh.push(pv);
  }
  await applyYaml(fresh.map((o) => stringify(o)).join('---\n'), { kubeconfig });
  return fresh.length;
}
