// Command lines of the control-plane components. Everything listens on loopback only;
// controller-manager and scheduler serve no HTTPS at all (--secure-port=0), so two clusters
// (two HELM_INSTALLER_CACHE roots) never fight over their fixed default ports.
import type { StatePaths } from './paths.js';

export interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
}

const SERVICE_CIDR = '10.96.0.0/12';
/** First address of SERVICE_CIDR: the in-cluster `kubernetes` Service, named in the serving cert. */
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
const POD_CIDR = '10.244.0.0/16';
/**
 * kwokctl's "unlimited" client rate limits (its consts DefaultUnlimitedQPS/Burst), for the
 * components that create and update objects on a release's behalf. KWOK's own client has no
 * limit. Test-cluster settings only: the API server on loopback is the only thing they protect.
 */
const UNLIMITED_CLIENT = ['--kube-api-qps=5000', '--kube-api-burst=10000'];

export function etcdArgs(paths: StatePaths, ports: Ports): string[] {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return [
    '--name=helm-installer',
    `--data-dir=${paths.etcdData}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=helm-installer=${peer}`,
    // Throwaway data: skipping fsync is what keeps the apiserver quick on a slow disk.
    '--unsafe-no-fsync=true',
    '--auto-compaction-mode=periodic',
    '--auto-compaction-retention=10m',
    '--log-level=warn',
  ];
}

export function apiserverArgs(paths: StatePaths, ports: Ports): string[] {
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${ports.apiserver}`,
    `--tls-cert-file=${paths.apiserverCert}`,
    `--tls-private-key-file=${paths.apiserverKey}`,
    `--client-ca-file=${paths.caCert}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${paths.serviceAccountPub}`,
    `--service-account-signing-key-file=${paths.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--authorization-mode=RBAC',
    // The advertised address is 127.0.0.1, which the `kubernetes` Endpoints may not hold.
    '--endpoint-reconciler-type=none',
    // Charts with privileged containers would otherwise be rejected outright.
    '--allow-privileged=true',
    '--profiling=false',
  ];
}

export function controllerManagerArgs(paths: StatePaths): string[] {
  return [
    `--kubeconfig=${paths.kubeconfig}`,
    '--leader-elect=false',
    '--secure-port=0',
    // All on-by-default controllers: job, cronjob, statefulset, persistentvolume-binder,
    // garbage-collector, namespace, serviceaccount(-token), node-lifecycle (which lifts the
    // node's not-ready taint), ...
    '--controllers=*',
    `--service-account-private-key-file=${paths.serviceAccountKey}`,
    `--root-ca-file=${paths.caCert}`,
    `--cluster-signing-cert-file=${paths.caCert}`,
    `--cluster-signing-key-file=${paths.caKey}`,
    '--profiling=false',
    // Client-side rate limits as kwokctl sets them: at the default 20 QPS the deployment and
    // replicaset controllers made about 5 ReplicaSets and Pods a second, so a chart of 1000
    // Deployments waited minutes for the controllers, not for helm or the installer.
    ...UNLIMITED_CLIENT,
    // More workers (default 5) so one slow sync does not hold the rest of a large release back.
    '--concurrent-deployment-syncs=20',
    '--concurrent-replicaset-syncs=20',
  ];
}

export function schedulerArgs(paths: StatePaths): string[] {
  // The scheduler's default (50 QPS) binds at most 50 pods a second; kwokctl lifts it too.
  return [
    `--kubeconfig=${paths.kubeconfig}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--profiling=false',
    ...UNLIMITED_CLIENT,
  ];
}

export function kwokArgs(paths: StatePaths): string[] {
  return [
    `--kubeconfig=${paths.kubeconfig}`,
    `--config=${paths.kwokConfig}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    // kwok renews the node's Lease like a kubelet, so the node-lifecycle controller keeps it Ready.
    '--node-lease-duration-seconds=40',
    `--cidr=${POD_CIDR}`,
    // The node's InternalIP (pods' hostIP). Loopback: nothing listens there for a fake kubelet,
    // so `kubectl logs/exec` fail at once instead of hanging on an unroutable address.
    '--node-ip=127.0.0.1',
  ];
}
