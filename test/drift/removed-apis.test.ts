// The removals table against Kubernetes' deprecated API migration guide, written out by hand
// (kubernetes.io/docs/reference/using-api/deprecation-guide/), and the record rewrite on a
// manifest as helm stores it.
import { describe, expect, it } from 'vitest';
import { describeMapping, mapRemovedApis, unservedObjects } from '../../src/drift/map-removed-apis.js';
import { servedFrom, successorServed } from '../../src/drift/removed-apis.js';
import { rewrittenPayload, setReleaseManifest, topLevelValueSpan } from '../../src/cluster/record-rewrite.js';
import { decodeReleasePayload } from '../../src/cluster/release-secrets.js';
import { builtRevisions } from '../../src/reconcile/read-state.js';

// What a Kubernetes 1.34 API server serves of these kinds (discovery's group/version/Kind).
const K134 = servedFrom([
  'apps/v1/DaemonSet',
  'apps/v1/Deployment',
  'apps/v1/ReplicaSet',
  'apps/v1/StatefulSet',
  'networking.k8s.io/v1/NetworkPolicy',
  'networking.k8s.io/v1/Ingress',
  'networking.k8s.io/v1/IngressClass',
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration',
  'apiextensions.k8s.io/v1/CustomResourceDefinition',
  'apiregistration.k8s.io/v1/APIService',
  'authentication.k8s.io/v1/TokenReview',
  'authorization.k8s.io/v1/SubjectAccessReview',
  'certificates.k8s.io/v1/CertificateSigningRequest',
  'coordination.k8s.io/v1/Lease',
  'rbac.authorization.k8s.io/v1/ClusterRole',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding',
  'rbac.authorization.k8s.io/v1/Role',
  'rbac.authorization.k8s.io/v1/RoleBinding',
  'scheduling.k8s.io/v1/PriorityClass',
  'storage.k8s.io/v1/CSIDriver',
  'storage.k8s.io/v1/CSINode',
  'storage.k8s.io/v1/StorageClass',
  'storage.k8s.io/v1/VolumeAttachment',
  'storage.k8s.io/v1/CSIStorageCapacity',
  'batch/v1/CronJob',
  'discovery.k8s.io/v1/EndpointSlice',
  'events.k8s.io/v1/Event',
  'autoscaling/v2/HorizontalPodAutoscaler',
  'autoscaling/v1/HorizontalPodAutoscaler',
  'policy/v1/PodDisruptionBudget',
  'node.k8s.io/v1/RuntimeClass',
  'flowcontrol.apiserver.k8s.io/v1/FlowSchema',
  'flowcontrol.apiserver.k8s.io/v1/PriorityLevelConfiguration',
  'v1/Pod',
  'v1/Service',
]);

describe('successorServed on a 1.34 cluster', () => {
  it.each([
    ['extensions/v1beta1', 'Deployment', 'apps/v1', '1.16'],
    ['apps/v1beta1', 'Deployment', 'apps/v1', '1.16'],
    ['apps/v1beta2', 'Deployment', 'apps/v1', '1.16'],
    ['extensions/v1beta1', 'DaemonSet', 'apps/v1', '1.16'],
    ['apps/v1beta2', 'DaemonSet', 'apps/v1', '1.16'],
    ['extensions/v1beta1', 'ReplicaSet', 'apps/v1', '1.16'],
    ['apps/v1beta1', 'StatefulSet', 'apps/v1', '1.16'],
    ['apps/v1beta2', 'StatefulSet', 'apps/v1', '1.16'],
    ['extensions/v1beta1', 'NetworkPolicy', 'networking.k8s.io/v1', '1.16'],
    ['extensions/v1beta1', 'Ingress', 'networking.k8s.io/v1', '1.22'],
    ['networking.k8s.io/v1beta1', 'Ingress', 'networking.k8s.io/v1', '1.22'],
    ['networking.k8s.io/v1beta1', 'IngressClass', 'networking.k8s.io/v1', '1.22'],
    ['admissionregistration.k8s.io/v1beta1', 'MutatingWebhookConfiguration', 'admissionregistration.k8s.io/v1', '1.22'],
    [
      'admissionregistration.k8s.io/v1beta1',
      'ValidatingWebhookConfiguration',
      'admissionregistration.k8s.io/v1',
      '1.22',
    ],
    ['apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition', 'apiextensions.k8s.io/v1', '1.22'],
    ['apiregistration.k8s.io/v1beta1', 'APIService', 'apiregistration.k8s.io/v1', '1.22'],
    ['certificates.k8s.io/v1beta1', 'CertificateSigningRequest', 'certificates.k8s.io/v1', '1.22'],
    ['coordination.k8s.io/v1beta1', 'Lease', 'coordination.k8s.io/v1', '1.22'],
    ['rbac.authorization.k8s.io/v1beta1', 'ClusterRole', 'rbac.authorization.k8s.io/v1', '1.22'],
    ['rbac.authorization.k8s.io/v1beta1', 'RoleBinding', 'rbac.authorization.k8s.io/v1', '1.22'],
    ['scheduling.k8s.io/v1beta1', 'PriorityClass', 'scheduling.k8s.io/v1', '1.22'],
    ['storage.k8s.io/v1beta1', 'StorageClass', 'storage.k8s.io/v1', '1.22'],
    ['storage.k8s.io/v1beta1', 'CSIDriver', 'storage.k8s.io/v1', '1.22'],
    ['storage.k8s.io/v1beta1', 'CSINode', 'storage.k8s.io/v1', '1.22'],
    ['storage.k8s.io/v1beta1', 'VolumeAttachment', 'storage.k8s.io/v1', '1.22'],
    ['batch/v1beta1', 'CronJob', 'batch/v1', '1.25'],
    ['discovery.k8s.io/v1beta1', 'EndpointSlice', 'discovery.k8s.io/v1', '1.25'],
    ['events.k8s.io/v1beta1', 'Event', 'events.k8s.io/v1', '1.25'],
    ['autoscaling/v2beta1', 'HorizontalPodAutoscaler', 'autoscaling/v2', '1.25'],
    ['policy/v1beta1', 'PodDisruptionBudget', 'policy/v1', '1.25'],
    ['node.k8s.io/v1beta1', 'RuntimeClass', 'node.k8s.io/v1', '1.25'],
    ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', 'autoscaling/v2', '1.26'],
    ['storage.k8s.io/v1beta1', 'CSIStorageCapacity', 'storage.k8s.io/v1', '1.27'],
    // flowcontrol v1beta1 (1.26) -> v1beta2 (1.29) -> v1beta3 (1.32) -> v1: the first step's removal is named.
    ['flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema', 'flowcontrol.apiserver.k8s.io/v1', '1.26'],
    ['flowcontrol.apiserver.k8s.io/v1beta2', 'PriorityLevelConfiguration', 'flowcontrol.apiserver.k8s.io/v1', '1.29'],
    ['flowcontrol.apiserver.k8s.io/v1beta3', 'FlowSchema', 'flowcontrol.apiserver.k8s.io/v1', '1.32'],
  ])('%s %s -> %s (removed in %s)', (from, kind, to, removedIn) => {
    const got = successorServed(from, kind, K134);
    expect(got?.to).toBe(to);
    expect(got?.removedIn).toBe(removedIn);
  });

  it('drops a PodSecurityPolicy, in either old group (removed in 1.25 with no successor)', () => {
    expect(successorServed('policy/v1beta1', 'PodSecurityPolicy', K134)).toEqual({ to: null, removedIn: '1.25' });
    expect(successorServed('extensions/v1beta1', 'PodSecurityPolicy', K134)).toEqual({ to: null, removedIn: '1.25' });
  });

  it('leaves what the cluster serves, and what the table does not know', () => {
    expect(successorServed('policy/v1', 'PodDisruptionBudget', K134)).toBeUndefined();
    expect(successorServed('autoscaling/v1', 'HorizontalPodAutoscaler', K134)).toBeUndefined();
    expect(successorServed('example.com/v1beta1', 'Widget', K134)).toBeUndefined();
  });

  it('on a 1.22 cluster that still serves policy/v1beta1, maps an extensions PSP there instead of dropping it', () => {
    const k122 = servedFrom(['policy/v1beta1/PodSecurityPolicy', 'apps/v1/Deployment']);
    expect(successorServed('extensions/v1beta1', 'PodSecurityPolicy', k122)).toEqual({
      to: 'policy/v1beta1',
      removedIn: '1.16',
    });
  });

  it('maps nothing when the cluster serves no successor (older than it)', () => {
    expect(successorServed('policy/v1beta1', 'PodDisruptionBudget', servedFrom(['v1/Pod']))).toBeUndefined();
  });
});

// A record as helm stores it: `---` then `# Source:` per template.
const RECORD = [
  '---',
  '# Source: shop/templates/pdb.yaml',
  'apiVersion: policy/v1beta1',
  'kind: PodDisruptionBudget',
  'metadata:',
  '  name: web',
  'spec:',
  '  minAvailable: 1',
  '  selector:',
  '    matchLabels: {app: web}',
  '---',
  '# Source: shop/templates/psp.yaml',
  'apiVersion: policy/v1beta1',
  'kind: PodSecurityPolicy',
  'metadata:',
  '  name: shop-psp',
  'spec:',
  '  privileged: false',
  '---',
  '# Source: shop/templates/hpa.yaml',
  'apiVersion: "autoscaling/v2beta2" # stays a comment',
  'kind: HorizontalPodAutoscaler',
  'metadata:',
  '  name: web',
  '  namespace: shop',
  'spec:',
  '  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}',
  '  minReplicas: 1',
  '  maxReplicas: 3',
  '---',
  '# Source: shop/templates/svc.yaml',
  'apiVersion: v1',
  'kind: Service',
  'metadata:',
  '  name: web',
  '',
].join('\n');

describe('mapRemovedApis', () => {
  it('rewrites the versions in place and cuts out a kind with no successor', () => {
    const got = mapRemovedApis(RECORD, K134);
    const expected = RECORD.replace(
      'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget',
      'apiVersion: policy/v1\nkind: PodDisruptionBudget',
    )
      .replace(
        [
          '---',
          '# Source: shop/templates/psp.yaml',
          'apiVersion: policy/v1beta1',
          'kind: PodSecurityPolicy',
          'metadata:',
          '  name: shop-psp',
          'spec:',
          '  privileged: false',
          '',
        ].join('\n'),
        '',
      )
      .replace('apiVersion: "autoscaling/v2beta2" # stays a comment', 'apiVersion: "autoscaling/v2" # stays a comment');
    expect(got.manifest).toBe(expected);
    expect(got.mappings).toEqual([
      {
        kind: 'PodDisruptionBudget',
        name: 'web',
        from: 'policy/v1beta1',
        to: 'policy/v1',
        removedIn: '1.25',
        source: 'shop/templates/pdb.yaml',
      },
      {
        kind: 'PodSecurityPolicy',
        name: 'shop-psp',
        from: 'policy/v1beta1',
        to: null,
        removedIn: '1.25',
        source: 'shop/templates/psp.yaml',
      },
      {
        kind: 'HorizontalPodAutoscaler',
        name: 'web',
        namespace: 'shop',
        from: 'autoscaling/v2beta2',
        to: 'autoscaling/v2',
        removedIn: '1.26',
        source: 'shop/templates/hpa.yaml',
      },
    ]);
    // Mapped once, nothing is left to map.
    expect(mapRemovedApis(got.manifest, K134)).toEqual({ manifest: got.manifest, mappings: [] });
  });

  it('returns a served manifest as it is', () => {
    const served = '---\n# Source: a/templates/d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n';
    expect(mapRemovedApis(served, K134)).toEqual({ manifest: served, mappings: [] });
  });

  it('names what a new render asks for, as a person reads it', () => {
    expect(unservedObjects(RECORD, K134).map(describeMapping)).toEqual([
      'PodDisruptionBudget/web: policy/v1beta1 -> policy/v1 (policy/v1beta1 removed in Kubernetes 1.25)',
      'PodSecurityPolicy/shop-psp: policy/v1beta1 dropped from the record (removed in Kubernetes 1.25 with no successor)',
      'HorizontalPodAutoscaler/shop/web: autoscaling/v2beta2 -> autoscaling/v2 (autoscaling/v2beta2 removed in Kubernetes 1.26)',
    ]);
  });
});

describe('setReleaseManifest', () => {
  it("replaces only the top-level manifest (not a hook's, not a value named manifest) and keeps big numbers as written", () => {
    const json =
      '{"name":"shop","info":{"status":"deployed"},"config":{"manifest":"x","big":12345678901234567890},"manifest":"---\\napiVersion: policy/v1beta1\\n","hooks":[{"manifest":"hook"}],"version":3}';
    const out = setReleaseManifest(json, '---\napiVersion: policy/v1\n');
    expect(out).toBe(
      '{"name":"shop","info":{"status":"deployed"},"config":{"manifest":"x","big":12345678901234567890},"manifest":"---\\napiVersion: policy/v1\\n","hooks":[{"manifest":"hook"}],"version":3}',
    );
  });

  it('finds the span of each top-level value', () => {
    const json = '{"a":[1,{"manifest":2}],"manifest" : "m\\"x","b":{}}';
    expect(topLevelValueSpan(json, 'manifest')).toEqual([json.indexOf('"m\\'), json.indexOf(',"b"')]);
    expect(topLevelValueSpan(json, 'a')).toEqual([5, 23]);
    expect(topLevelValueSpan(json, 'missing')).toBeUndefined();
  });
});

describe('builtRevisions: the records helm builds next', () => {
  const r = (revision: number, status: string) => ({ revision, status, labels: {} });
  it.each([
    ['none', [], []],
    ['deployed last', [r(3, 'deployed')], [3]],
    ['a failed upgrade after the deployed one', [r(3, 'deployed'), r(4, 'failed')], [3, 4]],
    ['stuck, its deployed one still deployed', [r(3, 'deployed'), r(4, 'pending-upgrade')], [3, 4]],
    [
      'stuck, nothing deployed: the newest superseded (2) is the rollback target',
      [r(1, 'failed'), r(3, 'pending-upgrade')],
      [2, 3],
    ],
    ['a first install failed', [r(1, 'failed')], [1]],
  ] as const)('%s', (_name, records, expected) => {
    expect(builtRevisions([...records])).toEqual(expected);
  });
});

describe('rewrittenPayload', () => {
  const json = JSON.stringify({
    name: 'shop',
    info: { status: 'deployed' },
    manifest: 'apiVersion: policy/v1beta1\n',
    version: 1,
  });
  it('encodes the record as helm does (gzip, base64) with the new manifest', () => {
    const out = rewrittenPayload(json, 'apiVersion: policy/v1\n', 'shop/sh.helm.release.v1.shop.v1');
    expect(JSON.parse(decodeReleasePayload(out))).toEqual({
      name: 'shop',
      info: { status: 'deployed' },
      manifest: 'apiVersion: policy/v1\n',
      version: 1,
    });
  });
  it('refuses a record a Secret cannot hold, exit 3, before any write', () => {
    const size = rewrittenPayload(json, 'apiVersion: policy/v1\n', 'x').length;
    expect(() =>
      rewrittenPayload(json, 'apiVersion: policy/v1\n', 'shop/sh.helm.release.v1.shop.v1', size - 1),
    ).toThrow(
      expect.objectContaining({
        exitCode: 3,
        message: `the rewritten record shop/sh.helm.release.v1.shop.v1 would be ${size} bytes, over the ${size - 1} a Secret holds; nothing was changed`,
      }),
    );
  });
});
