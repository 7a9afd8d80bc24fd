// The comparison of a release's previous manifest with the new render for the fields an API
// server refuses to change, on manifests written out by hand; expected candidates by hand too.
import { describe, expect, it } from 'vitest';
import type { ResourceIndex } from '../../src/cluster/capabilities.js';
import {
  changedImmutableFields,
  immutableCandidates,
  isImmutableRefusal,
  recreateHow,
} from '../../src/drift/immutable-fields.js';
import { manifestObjects, placeObjects } from '../../src/drift/manifest-objects.js';
import { deleteCommand, propagation } from '../../src/reconcile/actions/recreate-immutable.js';
import { markRecreated } from '../../src/preview/recreate-entries.js';
import { recreateLine } from '../../src/preview/summary.js';

const resources: ResourceIndex = new Map([
  ['apps/v1:StatefulSet', { group: 'apps', resource: 'statefulsets', namespaced: true }],
  ['apps/v1:Deployment', { group: 'apps', resource: 'deployments', namespaced: true }],
  ['apps/v1:DaemonSet', { group: 'apps', resource: 'daemonsets', namespaced: true }],
  ['batch/v1:Job', { group: 'batch', resource: 'jobs', namespaced: true }],
  ['v1:Service', { group: '', resource: 'services', namespaced: true }],
  ['v1:ConfigMap', { group: '', resource: 'configmaps', namespaced: true }],
]);

const place = (yaml: string) =>
  placeObjects(manifestObjects(yaml), resources, { releaseNamespace: 'shop', release: 'db' });

function statefulSet(o: {
  serviceName?: string;
  selector?: Record<string, string>;
  replicas?: number;
  image?: string;
  storage?: string;
  policy?: string;
}): string {
  const selector = o.selector ?? { app: 'db' };
  return `
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: ${o.serviceName ?? 'db-headless'}
  replicas: ${o.replicas ?? 1}
${o.policy ? `  podManagementPolicy: ${o.policy}\n` : ''}  selector:
    matchLabels: ${JSON.stringify(selector)}
  template:
    metadata:
      labels: ${JSON.stringify(selector)}
    spec:
      containers:
        - name: db
          image: ${o.image ?? 'example.invalid/db:1'}
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: ${o.storage ?? '1Gi'}
`;
}

function deployment(selector: Record<string, string>, image = 'example.invalid/web:1'): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: ${JSON.stringify(selector)}
  template:
    metadata:
      labels: ${JSON.stringify(selector)}
    spec:
      containers: [{ name: web, image: ${image} }]
`;
}

const service = (clusterIP?: string, type = 'ClusterIP') => `
apiVersion: v1
kind: Service
metadata:
  name: db-headless
spec:
  type: ${type}
${clusterIP ? `  clusterIP: ${clusterIP}\n` : ''}  ports: [{ port: 5432 }]
`;

const job = (image: string) => `
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{ name: migrate, image: ${image} }]
`;

const doc = (...parts: string[]) => parts.join('\n---\n');
const shape = (yamlBefore: string, yamlAfter: string) =>
  immutableCandidates(place(yamlBefore), place(yamlAfter)).map((c) => ({
    kind: c.kind,
    name: c.name,
    namespace: c.namespace,
    path: c.path,
    fields: c.fields,
    how: c.how,
  }));

describe('immutableCandidates', () => {
  it('nothing when only mutable fields change (replicas, template, a Deployment image)', () => {
    expect(
      shape(
        doc(statefulSet({}), deployment({ app: 'web' })),
        doc(
          statefulSet({ replicas: 3, image: 'example.invalid/db:2' }),
          deployment({ app: 'web' }, 'example.invalid/web:2'),
        ),
      ),
    ).toEqual([]);
  });

  it('a StatefulSet serviceName change: orphaned (pods and PVCs stay, the new one adopts them)', () => {
    expect(shape(statefulSet({}), statefulSet({ serviceName: 'db-v2' }))).toEqual([
      {
        kind: 'StatefulSet',
        name: 'db',
        namespace: 'shop',
        path: '/apis/apps/v1/namespaces/shop/statefulsets/db',
        fields: ['spec.serviceName'],
        how: 'orphan',
      },
    ]);
  });

  it('a StatefulSet volumeClaimTemplates and podManagementPolicy change: orphaned, both named', () => {
    expect(shape(statefulSet({}), statefulSet({ storage: '2Gi', policy: 'Parallel', replicas: 2 }))).toEqual([
      {
        kind: 'StatefulSet',
        name: 'db',
        namespace: 'shop',
        path: '/apis/apps/v1/namespaces/shop/statefulsets/db',
        fields: ['spec.podManagementPolicy', 'spec.volumeClaimTemplates'],
        how: 'orphan',
      },
    ]);
  });

  it('a StatefulSet selector change: deleted with its pods (they would never be adopted)', () => {
    expect(
      shape(statefulSet({}), statefulSet({ selector: { app: 'db', tier: 'data' }, serviceName: 'db-v2' })),
    ).toEqual([
      {
        kind: 'StatefulSet',
        name: 'db',
        namespace: 'shop',
        path: '/apis/apps/v1/namespaces/shop/statefulsets/db',
        fields: ['spec.selector', 'spec.serviceName'],
        how: 'delete',
      },
    ]);
  });

  it('a Deployment selector change, a Job template change, a headless Service made a ClusterIP one', () => {
    const before = doc(
      deployment({ app: 'web' }),
      job('example.invalid/migrate:1'),
      service('None'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "1"}',
    );
    const after = doc(
      deployment({ app: 'web', version: 'v2' }),
      job('example.invalid/migrate:2'),
      service(),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "2"}',
    );
    expect(shape(before, after)).toEqual([
      {
        kind: 'Deployment',
        name: 'web',
        namespace: 'shop',
        path: '/apis/apps/v1/namespaces/shop/deployments/web',
        fields: ['spec.selector'],
        how: 'delete',
      },
      {
        kind: 'Job',
        name: 'migrate',
        namespace: 'shop',
        path: '/apis/batch/v1/namespaces/shop/jobs/migrate',
        fields: ['spec.template'],
        how: 'delete',
      },
      {
        kind: 'Service',
        name: 'db-headless',
        namespace: 'shop',
        path: '/api/v1/namespaces/shop/services/db-headless',
        fields: ['spec.clusterIP'],
        how: 'delete',
      },
    ]);
  });

  it('a Service type change is a candidate (the dry run tells whether the server refuses it)', () => {
    expect(shape(service(undefined, 'ClusterIP'), service(undefined, 'NodePort')).map((c) => c.fields)).toEqual([
      ['spec.type'],
    ]);
  });

  it('objects new in the chart, or dropped from it, are not candidates; nor one in another namespace', () => {
    const moved = statefulSet({}).replace('name: db\n', 'name: db\n  namespace: other\n');
    expect(shape(statefulSet({}), doc(deployment({ app: 'web' }), moved.replace('db-headless', 'db-v2')))).toEqual([]);
  });

  it('an object whose kind the cluster does not serve has no path and is left to helm', () => {
    const gone = placeObjects(manifestObjects(statefulSet({})), new Map(), { releaseNamespace: 'shop', release: 'db' });
    const next = placeObjects(manifestObjects(statefulSet({ serviceName: 'x' })), new Map(), {
      releaseNamespace: 'shop',
      release: 'db',
    });
    expect(immutableCandidates(gone, next)).toEqual([]);
  });
});

describe('changedImmutableFields', () => {
  it('StatefulSet: every spec field but the mutable ones, one added or removed included', () => {
    const before = {
      serviceName: 'a',
      replicas: 1,
      revisionHistoryLimit: 5,
      minReadySeconds: 0,
      updateStrategy: { type: 'RollingUpdate' },
    };
    const after = {
      serviceName: 'a',
      replicas: 4,
      revisionHistoryLimit: 2,
      minReadySeconds: 10,
      updateStrategy: { type: 'OnDelete' },
      podManagementPolicy: 'Parallel',
      ordinals: { start: 1 },
    };
    expect(changedImmutableFields('apps/StatefulSet', before, after)).toEqual(['spec.podManagementPolicy']);
  });

  it('maps compared by content, not key order', () => {
    expect(
      changedImmutableFields(
        'apps/Deployment',
        { selector: { matchLabels: { a: '1', b: '2' } } },
        { selector: { matchLabels: { b: '2', a: '1' } } },
      ),
    ).toEqual([]);
  });

  it('a kind with no immutable field known here: none', () => {
    expect(changedImmutableFields('/ConfigMap', { a: 1 }, { a: 2 })).toEqual([]);
    expect(changedImmutableFields('example.com/StatefulSet', { serviceName: 'a' }, { serviceName: 'b' })).toEqual([]);
  });
});

describe('recreateHow and isImmutableRefusal', () => {
  it('orphan only a StatefulSet whose selector stays', () => {
    expect(recreateHow('StatefulSet', ['spec.serviceName', 'spec.volumeClaimTemplates'])).toBe('orphan');
    expect(recreateHow('StatefulSet', ['spec.selector'])).toBe('delete');
    expect(recreateHow('Deployment', ['spec.selector'])).toBe('delete');
  });

  it("the API server's refusals of immutable fields, as refusal.ts quotes them; other refusals are not", () => {
    expect(
      isImmutableRefusal(
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      ),
    ).toBe(true);
    expect(isImmutableRefusal('spec.selector: field is immutable (value [REDACTED])')).toBe(true);
    expect(isImmutableRefusal('spec.clusterIPs[0]: may not change once set (value [REDACTED])')).toBe(true);
    expect(isImmutableRefusal('spec.ports[0].port: Invalid value: [REDACTED]')).toBe(false);
    expect(isImmutableRefusal('spec.template.spec.containers[0].image: Required value')).toBe(false);
  });
});

describe('plan: markRecreated and its text', () => {
  const live = (release: string) => ({
    metadata: { annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': 'shop' } },
  });
  const refusedSts = "spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden";
  const input = (o: { release?: string; refused?: string; hook?: string }) => ({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    name: 'db',
    namespace: 'shop',
    desired: {},
    live: live(o.release ?? 'db'),
    ...(o.refused ? { refused: o.refused } : {}),
    ...(o.hook ? { hook: o.hook } : {}),
  });
  const manifests = { previous: place(statefulSet({})), next: place(statefulSet({ serviceName: 'db-v2' })) };
  const who = { release: 'db', releaseNamespace: 'shop' };

  it('marks a refused, owned candidate with its fields and how', () => {
    expect(markRecreated([input({ refused: refusedSts })], manifests, who).map((i) => i.recreate)).toEqual([
      { fields: ['spec.serviceName'], how: 'orphan' },
    ]);
  });

  it('not when the dry run was accepted, refused for another reason, or the object is another release’s', () => {
    const inputs = [
      input({}),
      input({ refused: 'spec.ports[0].port: Invalid value: [REDACTED]' }),
      input({ refused: refusedSts, release: 'other' }),
    ];
    expect(markRecreated(inputs, manifests, who).map((i) => i.recreate)).toEqual([undefined, undefined, undefined]);
  });

  it('the line plan prints', () => {
    expect(recreateLine({ fields: ['spec.serviceName'], how: 'orphan' })).toBe(
      'recreated before the upgrade: spec.serviceName cannot change; deleted alone (its pods and PVCs stay; the new one adopts them), then helm creates it',
    );
    expect(recreateLine({ fields: ['spec.selector'], how: 'delete' })).toBe(
      'recreated before the upgrade: spec.selector cannot change; deleted with what it owns (PVCs stay), then helm creates it',
    );
  });
});

describe('install: propagation and the kubectl command named with --recreate-immutable never', () => {
  it('orphan; a StatefulSet otherwise in the foreground; anything else in the background', () => {
    expect(propagation({ kind: 'StatefulSet', how: 'orphan' })).toBe('Orphan');
    expect(propagation({ kind: 'StatefulSet', how: 'delete' })).toBe('Foreground');
    expect(propagation({ kind: 'Deployment', how: 'delete' })).toBe('Background');
    expect(deleteCommand({ kind: 'StatefulSet', name: 'db', namespace: 'shop', how: 'orphan' })).toBe(
      'kubectl delete statefulset db -n shop --cascade=orphan',
    );
  });
});
