// The Kubernetes APIs a cluster upgrade takes away, pure data, and what a stored release record or
// a new render does about them. A release installed while the cluster served, say,
// policy/v1beta1 keeps that apiVersion in its record; once the cluster stops serving it, helm
// cannot build "the current release" before an upgrade and every run fails the same way
// (helm/helm#7219). Helm's own answer is the helm-mapkubeapis plugin, which rewrites the latest
// record; this is the installer's table of the same removals, from Kubernetes' deprecated API
// migration guide. Each row is one step (what replaced the version); `successorServed` follows the
// steps until the cluster serves one (extensions/v1beta1 PodSecurityPolicy went to policy/v1beta1,
// which was removed with no successor).

/** One removed apiVersion of one kind. `successor: null`: removed with nothing in its place. */
interface Removal {
  apiVersion: string;
  kind: string;
  /** The Kubernetes minor version that stopped serving it. */
  removedIn: string;
  successor: string | null;
}

const rows = (apiVersions: string[], kinds: string[], removedIn: string, successor: string | null): Removal[] =>
  apiVersions.flatMap((apiVersion) => kinds.map((kind) => ({ apiVersion, kind, removedIn, successor })));

const FLOWCONTROL = ['FlowSchema', 'PriorityLevelConfiguration'];

const REMOVALS: readonly Removal[] = [
  // 1.16
  ...rows(['extensions/v1beta1', 'apps/v1beta2'], ['DaemonSet'], '1.16', 'apps/v1'),
  ...rows(['extensions/v1beta1', 'apps/v1beta1', 'apps/v1beta2'], ['Deployment', 'ReplicaSet'], '1.16', 'apps/v1'),
  ...rows(['apps/v1beta1', 'apps/v1beta2'], ['StatefulSet'], '1.16', 'apps/v1'),
  ...rows(['extensions/v1beta1'], ['NetworkPolicy'], '1.16', 'networking.k8s.io/v1'),
  ...rows(['extensions/v1beta1'], ['PodSecurityPolicy'], '1.16', 'policy/v1beta1'),
  // 1.22
  ...rows(
    ['admissionregistration.k8s.io/v1beta1'],
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    '1.22',
    'admissionregistration.k8s.io/v1',
  ),
  ...rows(['apiextensions.k8s.io/v1beta1'], ['CustomResourceDefinition'], '1.22', 'apiextensions.k8s.io/v1'),
  ...rows(['apiregistration.k8s.io/v1beta1'], ['APIService'], '1.22', 'apiregistration.k8s.io/v1'),
  ...rows(['authentication.k8s.io/v1beta1'], ['TokenReview'], '1.22', 'authentication.k8s.io/v1'),
  ...rows(
    ['authorization.k8s.io/v1beta1'],
    ['LocalSubjectAccessReview', 'SelfSubjectAccessReview', 'SubjectAccessReview'],
    '1.22',
    'authorization.k8s.io/v1',
  ),
  ...rows(['certificates.k8s.io/v1beta1'], ['CertificateSigningRequest'], '1.22', 'certificates.k8s.io/v1'),
  ...rows(['coordination.k8s.io/v1beta1'], ['Lease'], '1.22', 'coordination.k8s.io/v1'),
  ...rows(['extensions/v1beta1', 'networking.k8s.io/v1beta1'], ['Ingress'], '1.22', 'networking.k8s.io/v1'),
  ...rows(['networking.k8s.io/v1beta1'], ['IngressClass'], '1.22', 'networking.k8s.io/v1'),
  ...rows(
    ['rbac.authorization.k8s.io/v1beta1'],
    ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
    '1.22',
    'rbac.authorization.k8s.io/v1',
  ),
  ...rows(['scheduling.k8s.io/v1beta1'], ['PriorityClass'], '1.22', 'scheduling.k8s.io/v1'),
  ...rows(
    ['storage.k8s.io/v1beta1'],
    ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
    '1.22',
    'storage.k8s.io/v1',
  ),
  // 1.25
  ...rows(['batch/v1beta1'], ['CronJob'], '1.25', 'batch/v1'),
  ...rows(['discovery.k8s.io/v1beta1'], ['EndpointSlice'], '1.25', 'discovery.k8s.io/v1'),
  ...rows(['events.k8s.io/v1beta1'], ['Event'], '1.25', 'events.k8s.io/v1'),
  ...rows(['autoscaling/v2beta1'], ['HorizontalPodAutoscaler'], '1.25', 'autoscaling/v2'),
  ...rows(['policy/v1beta1'], ['PodDisruptionBudget'], '1.25', 'policy/v1'),
  ...rows(['policy/v1beta1'], ['PodSecurityPolicy'], '1.25', null),
  ...rows(['node.k8s.io/v1beta1'], ['RuntimeClass'], '1.25', 'node.k8s.io/v1'),
  // 1.26
  ...rows(['flowcontrol.apiserver.k8s.io/v1beta1'], FLOWCONTROL, '1.26', 'flowcontrol.apiserver.k8s.io/v1beta2'),
  ...rows(['autoscaling/v2beta2'], ['HorizontalPodAutoscaler'], '1.26', 'autoscaling/v2'),
  // 1.27
  ...rows(['storage.k8s.io/v1beta1'], ['CSIStorageCapacity'], '1.27', 'storage.k8s.io/v1'),
  // 1.29
  ...rows(['flowcontrol.apiserver.k8s.io/v1beta2'], FLOWCONTROL, '1.29', 'flowcontrol.apiserver.k8s.io/v1beta3'),
  // 1.32
  ...rows(['flowcontrol.apiserver.k8s.io/v1beta3'], FLOWCONTROL, '1.32', 'flowcontrol.apiserver.k8s.io/v1'),
];

const BY_KEY = new Map(REMOVALS.map((r) => [`${r.apiVersion}:${r.kind}`, r]));

/** Whether the cluster serves `kind` at `apiVersion` (discovery's `group/version/Kind` entries). */
export type Served = (apiVersion: string, kind: string) => boolean;

/** Pure: a Served from the Capabilities' API list (`policy/v1/PodDisruptionBudget`, `v1/Pod`, ...). */
export function servedFrom(apiVersions: readonly string[]): Served {
  const set = new Set(apiVersions);
  return (apiVersion, kind) => set.has(`${apiVersion}/${kind}`);
}

/** Where an unserved apiVersion of a kind goes: `to` (null: dropped), and the removal that took it away. */
export interface Successor {
  to: string | null;
  removedIn: string;
}

/**
 * Pure. Undefined when the kind is served at `apiVersion`, or its version is not in the table (a
 * custom resource's, or one the table does not know). Otherwise the first version along the
 * table's steps that the cluster serves (with the release that removed `apiVersion`), or null
 * when a step ends in a removal with no successor (with that removal's release).
 * A chain whose end the cluster does not serve either (a cluster older than the successor) is not
 * mapped: undefined.
 */
export function successorServed(apiVersion: string, kind: string, served: Served): Successor | undefined {
  if (served(apiVersion, kind)) return undefined;
  const first = BY_KEY.get(`${apiVersion}:${kind}`);
  if (!first) return undefined;
  let step: Removal | undefined = first;
  for (let hops = 0; step && hops < 8; hops++) {
    if (step.successor === null) return { to: null, removedIn: step.removedIn };
    // The removal named is the record's own version's (the first step).
    if (served(step.successor, kind)) return { to: step.successor, removedIn: first.removedIn };
    step = BY_KEY.get(`${step.successor}:${kind}`);
  }
  return undefined;
}
