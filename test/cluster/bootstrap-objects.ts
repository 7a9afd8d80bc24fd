// Objects every test cluster starts with: the fake Node KWOK manages, a default StorageClass
// (the PersistentVolume pool is in volume-pool.ts) and the IngressClass the bundled app's example
// customer values name, as a customer's cluster with an ingress controller has one (the installer
// refuses a chart naming a class the cluster lacks: src/reconcile/named-classes.ts).
import { stringify } from 'yaml';

export const FAKE_NODE_NAME = 'kwok-node-0';
export const STORAGE_CLASS = 'standard';
const INGRESS_CLASS = 'nginx';

/**
 * No taints, so charts need no toleration; KWOK's node-initialize stage fills in allocatable
 * (cpu 1k, memory 1Ti, pods 1M) when the status has none. The well-known labels let charts
 * that pin `kubernetes.io/os: linux` or spread over zones schedule as on a real node.
 */
function fakeNode(): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: FAKE_NODE_NAME,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': FAKE_NODE_NAME,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/agent': '',
        'topology.kubernetes.io/region': 'local',
        'topology.kubernetes.io/zone': 'local-a',
      },
    },
  };
}

function defaultStorageClass(): object {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'kubernetes.io/no-provisioner',
    reclaimPolicy: 'Retain',
    volumeBindingMode: 'Immediate',
    allowVolumeExpansion: true,
  };
}

/** No controller serves it here: Ingresses are only stored, as KWOK's pods only pretend to run. */
function ingressClass(): object {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: INGRESS_CLASS },
    spec: { controller: 'k8s.io/ingress-nginx' },
  };
}

export function bootstrapManifest(): string {
  return [fakeNode(), defaultStorageClass(), ingressClass()].map((o) => stringify(o)).join('---\n');
}
