// The plan's entries (src/preview/plan-entries.ts) on fixture objects as the cluster side finds
// them: a dry-run result or a manifest object as desired, the live object with the API server's
// bookkeeping in it. Every expected field list and diff is written out by hand.
import { describe, expect, it } from 'vitest';
import { planEntries } from '../../src/preview/plan-entries.js';
import type { Obj, PlanObjectInput } from '../../src/preview/plan-types.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const deployment = (image: string, dbPassword: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    labels: { app: 'web' },
    annotations: { 'meta.helm.sh/release-name': 'shop' },
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'web',
            image,
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'DB_PASSWORD', value: dbPassword },
            ],
          },
        ],
      },
    },
  },
});

// `kubectl set image` changed the image by hand: kubectl-set now owns it, helm the rest.
const helmFields = {
  'f:metadata': { 'f:labels': { 'f:app': {} }, 'f:annotations': { 'f:meta.helm.sh/release-name': {} } },
  'f:spec': {
    'f:replicas': {},
    'f:selector': {},
    'f:template': {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:containers': {
          'k:{"name":"web"}': {
            '.': {},
            'f:name': {},
            'f:env': {
              'k:{"name":"MODE"}': { '.': {}, 'f:name': {}, 'f:value': {} },
              'k:{"name":"DB_PASSWORD"}': { '.': {}, 'f:name': {}, 'f:value': {} },
            },
          },
        },
      },
    },
  },
};
const kubectlSetFields = {
  'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { 'f:image': {} } } } } },
};

function liveDeployment(): Obj {
  const live = deployment('nginx:1.28', 'old-db-secret');
  return {
    ...live,
    metadata: {
      ...live.metadata,
      uid: 'u-1',
      resourceVersion: '100',
      generation: 3,
      creationTimestamp: '2026-11-24T10:00:00Z',
      annotations: {
        ...live.metadata.annotations,
        'deployment.kubernetes.io/revision': '2',
        [LAST_APPLIED]: '{"spec":{"replicas":1}}',
      },
      managedFields: [
        { manager: 'helm', operation: 'Apply', time: '2026-11-24T10:00:00Z', fieldsV1: helmFields },
        { manager: 'kubectl-set', operation: 'Update', time: '2026-11-24T11:00:00Z', fieldsV1: kubectlSetFields },
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          subresource: 'status',
          fieldsV1: { 'f:status': { 'f:replicas': {} } },
        },
      ],
    },
    status: { replicas: 2, readyReplicas: 2 },
  };
}

// The dry-run result of the release's apply: the chart's image through the airgap rewrite, a new
// database password from the values; the server's bookkeeping differs, status is the live one.
function desiredDeployment(): Obj {
  const desired = deployment('registry.local/nginx:1.27', 'hunter2-secret');
  return {
    ...desired,
    metadata: { ...desired.metadata, uid: 'u-1', resourceVersion: '101', generation: 4 },
    status: { replicas: 2 },
  };
}

const deploymentInput = (): PlanObjectInput => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: 'web',
  namespace: 'shop',
  desired: desiredDeployment(),
  live: liveDeployment(),
});

const deploymentDiff = [
  '--- live Deployment web (shop)',
  '+++ desired',
  '@@ -19,9 +19,9 @@',
  '     spec:',
  '       containers:',
  '         - name: web',
  '-          image: nginx:1.28',
  '+          image: registry.local/nginx:1.27',
  '           env:',
  '             - name: MODE',
  '               value: prod',
  '             - name: DB_PASSWORD',
  '-              value: (secret)',
  '+              value: (secret, changed)',
  '',
].join('\n');

describe('planEntries: a changed object', () => {
  it('lists the changed image (a list item) and the masked password, and names kubectl-set, who set the image by hand', () => {
    const { entries, hooks } = planEntries([deploymentInput()], { showSecrets: false });
    expect(hooks).toEqual([]);
    expect(entries).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        namespace: 'shop',
        action: 'change',
        fields: ['/spec/template/spec/containers/0/env/1/value', '/spec/template/spec/containers/0/image'],
        changedBy: ['kubectl-set'],
        diff: deploymentDiff,
      },
    ]);
    const text = JSON.stringify(entries);
    for (const secret of ['hunter2-secret', 'old-db-secret']) expect(text).not.toContain(secret);
  });

  it('shows the password in clear with showSecrets', () => {
    const [entry] = planEntries([deploymentInput()], { showSecrets: true }).entries;
    expect(entry!.diff).toContain('-              value: old-db-secret\n+              value: hunter2-secret\n');
  });

  it("is unchanged when only server bookkeeping, status and others' labels and annotations differ", () => {
    const live = liveDeployment();
    live.spec = desiredDeployment().spec;
    (live.metadata as Obj).labels = { app: 'web', team: 'payments' };
    const [entry] = planEntries(
      [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'web',
          namespace: 'shop',
          desired: desiredDeployment(),
          live,
        },
      ],
      { showSecrets: false },
    ).entries;
    expect(entry).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      namespace: 'shop',
      action: 'unchanged',
      fields: [],
      changedBy: [],
      diff: '',
    });
  });

  it('names every hand editor of a changed value once, in field order, never helm nor before-first-apply', () => {
    const cm = (a: string, b: string, tier: string, managedFields?: unknown[]) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', labels: { tier }, ...(managedFields ? { managedFields } : {}) },
      data: { a, b, c: 'same' },
    });
    const live = cm('1', '2', 'back', [
      { manager: 'before-first-apply', operation: 'Update', fieldsV1: { 'f:data': { 'f:b': {} } } },
      { manager: 'helm', operation: 'Apply', fieldsV1: { 'f:data': { 'f:c': {} } } },
      { manager: 'kubectl-label', operation: 'Update', fieldsV1: { 'f:metadata': { 'f:labels': { 'f:tier': {} } } } },
      { manager: 'kubectl-edit', operation: 'Update', fieldsV1: { 'f:data': { 'f:a': {} } } },
    ]);
    const [entry] = planEntries(
      [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', desired: cm('x', 'y', 'front'), live }],
      { showSecrets: false },
    ).entries;
    expect(entry!.fields).toEqual(['/data/a', '/data/b', '/metadata/labels/tier']);
    expect(entry!.changedBy).toEqual(['kubectl-edit', 'kubectl-label']);
  });

  it('compares a refused object on the fields its manifest sets, and keeps the refusal', () => {
    const statefulSet = (app: string) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'shop' },
      spec: {
        serviceName: 'db',
        selector: { matchLabels: { app } },
        template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'db', image: 'postgres:17' }] } },
      },
    });
    const live = statefulSet('db');
    const defaulted = {
      ...live,
      metadata: { ...live.metadata, uid: 'u-2', labels: { app: 'db' } },
      spec: {
        podManagementPolicy: 'OrderedReady',
        replicas: 1,
        revisionHistoryLimit: 10,
        ...live.spec,
        template: {
          metadata: { labels: { app: 'db' } },
          spec: {
            restartPolicy: 'Always',
            containers: [{ name: 'db', image: 'postgres:17', imagePullPolicy: 'IfNotPresent' }],
          },
        },
      },
      status: { replicas: 1 },
    };
    const refused =
      'StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than ... are forbidden';
    const [entry] = planEntries(
      [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'db',
          namespace: 'shop',
          desired: statefulSet('db2'),
          live: defaulted,
          refused,
        },
      ],
      { showSecrets: false },
    ).entries;
    expect(entry).toEqual({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: 'db',
      namespace: 'shop',
      action: 'change',
      fields: ['/spec/selector/matchLabels/app', '/spec/template/metadata/labels/app'],
      changedBy: [],
      refused,
      diff: [
        '--- live StatefulSet db (shop)',
        '+++ desired',
        '@@ -7,11 +7,11 @@',
        '   serviceName: db',
        '   selector:',
        '     matchLabels:',
        '-      app: db',
        '+      app: db2',
        '   template:',
        '     metadata:',
        '       labels:',
        '-        app: db',
        '+        app: db2',
        '     spec:',
        '       containers:',
        '         - name: db',
        '',
      ].join('\n'),
    });
  });
});

describe('planEntries: secrets', () => {
  const secret = (data: Record<string, string>, tier = 'db') => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'shop', labels: { tier } },
    type: 'Opaque',
    data,
  });
  const input = (live: Obj, desired: Obj): PlanObjectInput => ({
    apiVersion: 'v1',
    kind: 'Secret',
    name: 'db',
    namespace: 'shop',
    live,
    desired,
  });
  // base64 of 'old-password' and 'new-password'.
  const [oldValue, newValue] = ['b2xkLXBhc3N3b3Jk', 'bmV3LXBhc3N3b3Jk'];

  it('says a changed value changed and an unchanged one did not, never either value', () => {
    const { entries } = planEntries(
      [input(secret({ user: 'YWRtaW4=', password: oldValue }), secret({ user: 'YWRtaW4=', password: newValue }))],
      { showSecrets: false },
    );
    expect(entries).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'db',
        namespace: 'shop',
        action: 'change',
        fields: ['/data/password'],
        changedBy: [],
        diff: [
          '--- live Secret db (shop)',
          '+++ desired',
          '@@ -8,4 +8,4 @@',
          ' type: Opaque',
          ' data:',
          '   user: (secret, unchanged)',
          '-  password: (secret)',
          '+  password: (secret, changed)',
          '',
        ].join('\n'),
      },
    ]);
    const text = JSON.stringify(entries);
    for (const value of [oldValue, newValue, 'old-password', 'new-password', 'YWRtaW4=', 'admin'])
      expect(text).not.toContain(value);
  });

  it('shows data that did not change as unchanged next to a change elsewhere in the Secret', () => {
    const [entry] = planEntries(
      [input(secret({ password: oldValue }, 'db'), secret({ password: oldValue }, 'cache'))],
      { showSecrets: false },
    ).entries;
    expect(entry!.fields).toEqual(['/metadata/labels/tier']);
    expect(entry!.diff).toBe(
      [
        '--- live Secret db (shop)',
        '+++ desired',
        '@@ -4,7 +4,7 @@',
        '   name: db',
        '   namespace: shop',
        '   labels:',
        '-    tier: db',
        '+    tier: cache',
        ' type: Opaque',
        ' data:',
        '   password: (secret, unchanged)',
        '',
      ].join('\n'),
    );
  });

  it('is unchanged, with no diff, when nothing in the Secret changes', () => {
    const [entry] = planEntries([input(secret({ password: oldValue }), secret({ password: oldValue }))], {
      showSecrets: false,
    }).entries;
    expect(entry).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'db',
      namespace: 'shop',
      action: 'unchanged',
      fields: [],
      changedBy: [],
      diff: '',
    });
  });
});

describe('planEntries: a release of several objects', () => {
  const settings = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'shop' },
    data: { mode: 'prod', password: 'hunter2' },
  };
  const legacy = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'legacy',
      namespace: 'shop',
      uid: 'u-3',
      resourceVersion: '7',
      managedFields: [{ manager: 'helm', operation: 'Apply', fieldsV1: {} }],
    },
    data: { a: '1' },
  };
  const service = (resourceVersion: string) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop', resourceVersion },
    spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
    status: { loadBalancer: {} },
  });
  const migrate = (image: string) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'migrate', namespace: 'shop', annotations: { 'helm.sh/hook': 'pre-upgrade' } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image }] } } },
  });
  const inputs: PlanObjectInput[] = [
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'shop', desired: settings },
    deploymentInput(),
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'legacy', namespace: 'shop', live: legacy },
    { apiVersion: 'v1', kind: 'Service', name: 'web', namespace: 'shop', desired: service('12'), live: service('11') },
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'never-there', namespace: 'shop' },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'migrate',
      namespace: 'shop',
      hook: 'pre-upgrade',
      desired: migrate('registry.local/shop-migrate:1.2'),
      live: migrate('shop-migrate:1.1'),
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      name: 'old-hook',
      namespace: 'shop',
      hook: 'post-install',
      live: migrate('x:1'),
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'shop-reader',
      desired: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'shop-reader' },
        rules: [],
      },
    },
  ];

  it('creates, changes, deletes and leaves alone in input order, drops what neither side has, and lists hooks apart as created', () => {
    const { entries, hooks } = planEntries(inputs, { showSecrets: false });
    expect(entries.map((e) => [e.kind, e.name, e.action])).toEqual([
      ['ConfigMap', 'settings', 'create'],
      ['Deployment', 'web', 'change'],
      ['ConfigMap', 'legacy', 'delete'],
      ['Service', 'web', 'unchanged'],
      ['ClusterRole', 'shop-reader', 'create'],
    ]);
    expect(entries[0]).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'settings',
      namespace: 'shop',
      action: 'create',
      fields: [],
      changedBy: [],
      diff: [
        '--- live ConfigMap settings (shop)',
        '+++ desired',
        '@@ -0,0 +1,8 @@',
        '+apiVersion: v1',
        '+kind: ConfigMap',
        '+metadata:',
        '+  name: settings',
        '+  namespace: shop',
        '+data:',
        '+  mode: prod',
        '+  password: (secret)',
        '',
      ].join('\n'),
    });
    expect(entries[1]!.diff).toBe(deploymentDiff);
    expect(entries[2]).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'legacy',
      namespace: 'shop',
      action: 'delete',
      fields: [],
      changedBy: [],
      diff: [
        '--- live ConfigMap legacy (shop)',
        '+++ desired',
        '@@ -1,7 +0,0 @@',
        '-apiVersion: v1',
        '-kind: ConfigMap',
        '-metadata:',
        '-  name: legacy',
        '-  namespace: shop',
        '-data:',
        '-  a: "1"',
        '',
      ].join('\n'),
    });
    expect(entries[3]).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      name: 'web',
      namespace: 'shop',
      action: 'unchanged',
      fields: [],
      changedBy: [],
      diff: '',
    });
    expect(entries[4]!.diff.split('\n').slice(0, 3)).toEqual([
      '--- live ClusterRole shop-reader',
      '+++ desired',
      '@@ -0,0 +1,5 @@',
    ]);
    expect(entries[4]).not.toHaveProperty('namespace');
    expect(hooks).toEqual([
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: 'migrate',
        namespace: 'shop',
        action: 'create',
        hook: 'pre-upgrade',
        fields: [],
        changedBy: [],
        diff: [
          '--- live Job migrate (shop)',
          '+++ desired',
          '@@ -0,0 +1,14 @@',
          '+apiVersion: batch/v1',
          '+kind: Job',
          '+metadata:',
          '+  name: migrate',
          '+  namespace: shop',
          '+  annotations:',
          '+    helm.sh/hook: pre-upgrade',
          '+spec:',
          '+  template:',
          '+    spec:',
          '+      restartPolicy: Never',
          '+      containers:',
          '+        - name: migrate',
          '+          image: registry.local/shop-migrate:1.2',
          '',
        ].join('\n'),
      },
    ]);
  });

  it('does not modify its inputs', () => {
    const before = JSON.stringify(inputs);
    planEntries(inputs, { showSecrets: false });
    expect(JSON.stringify(inputs)).toBe(before);
  });
});
