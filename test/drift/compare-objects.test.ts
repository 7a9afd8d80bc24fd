// The drift comparison on fixture objects: the dry-run result (what the release's apply would
// leave) against the live object. Expected paths and values written out by hand.
import { describe, expect, it } from 'vitest';
import { compareObjects, renderValue, setAsWritten } from '../../src/drift/compare-objects.js';
import { ignoredPaths, parseIgnoreRules } from '../../src/drift/ignore-rules.js';

const clone = <T>(x: T): T => structuredClone(x);

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: 'shop',
    uid: 'u-1',
    resourceVersion: '100',
    generation: 2,
    creationTimestamp: '2026-11-24T10:00:00Z',
    labels: { app: 'web', 'app.kubernetes.io/managed-by': 'Helm' },
    annotations: { 'meta.helm.sh/release-name': 'shop', 'deployment.kubernetes.io/revision': '1' },
    managedFields: [] as unknown[],
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
            image: 'nginx:1.27',
            env: [
              { name: 'MODE', value: 'prod' },
              { name: 'DB_PASSWORD', value: 'hunter2-secret' },
            ],
            ports: [{ containerPort: 8080, protocol: 'TCP' }],
          },
        ],
      },
    },
  },
  status: { replicas: 2, readyReplicas: 2 },
};

describe('compareObjects', () => {
  it('finds nothing when only status and server-set metadata differ', () => {
    const live = clone(deployment);
    const desired = clone(deployment);
    Object.assign(desired.metadata, {
      resourceVersion: '101',
      generation: 3,
      uid: 'u-1',
      managedFields: [{ manager: 'helm' }],
    });
    desired.status = { replicas: 0, readyReplicas: 0 };
    expect(compareObjects(desired, live, [])).toEqual([]);
  });

  it('names a changed image and a changed env value', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0]!.image = 'nginx:1.28';
    live.spec.template.spec.containers[0]!.env[0]!.value = 'debug';
    expect(compareObjects(clone(deployment), live, [])).toEqual([
      { path: '/spec/template/spec/containers/0/env/0/value', live: 'debug', desired: 'prod' },
      { path: '/spec/template/spec/containers/0/image', live: 'nginx:1.28', desired: 'nginx:1.27' },
    ]);
  });

  it('names a scale, and ignores it under a rule for /spec/replicas', () => {
    const live = clone(deployment);
    live.spec.replicas = 5;
    expect(compareObjects(clone(deployment), live, [])).toEqual([{ path: '/spec/replicas', live: '5', desired: '2' }]);
    expect(compareObjects(clone(deployment), live, ['/spec/replicas'])).toEqual([]);
  });

  it('ignore rules with a target apply to their object only; without one, to every object', () => {
    const live = clone(deployment);
    live.spec.replicas = 5;
    const origin = { option: '--drift-ignore', env: 'HELM_INSTALLER_DRIFT_IGNORE' };
    const compareWith = (text: string, ref: { kind: string; name: string; namespace: string }) =>
      compareObjects(clone(deployment), live, ignoredPaths(parseIgnoreRules(text, origin), ref));
    const web = { kind: 'Deployment', name: 'web', namespace: 'shop' };
    expect(compareWith('Deployment/web:/spec/replicas', web)).toEqual([]);
    expect(compareWith('/spec/replicas', web)).toEqual([]);
    expect(compareWith('Deployment/api:/spec/replicas', web)).toEqual([
      { path: '/spec/replicas', live: '5', desired: '2' },
    ]);
    expect(compareWith('StatefulSet:/spec/replicas', web)).toEqual([
      { path: '/spec/replicas', live: '5', desired: '2' },
    ]);
    expect(compareWith('Deployment/other-ns/web:/spec/replicas', web)).toEqual([
      { path: '/spec/replicas', live: '5', desired: '2' },
    ]);
  });

  it('masks a secret-named env value, on both sides', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0]!.env[1]!.value = 'changed-by-hand';
    const found = compareObjects(clone(deployment), live, []);
    expect(found).toEqual([
      { path: '/spec/template/spec/containers/0/env/1/value', live: '[REDACTED]', desired: '[REDACTED]' },
    ]);
    expect(JSON.stringify(found)).not.toContain('hunter2');
  });

  it('names a list item missing from the live object as a whole, its secrets masked', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0]!.env.pop();
    expect(compareObjects(clone(deployment), live, [])).toEqual([
      {
        path: '/spec/template/spec/containers/0/env/1',
        live: '(absent)',
        desired: '{"name":"DB_PASSWORD","value":"[REDACTED]"}',
      },
    ]);
  });

  it('names a changed item of a list (a container port)', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0]!.ports[0]!.containerPort = 9090;
    expect(compareObjects(clone(deployment), live, [])).toEqual([
      { path: '/spec/template/spec/containers/0/ports/0/containerPort', live: '9090', desired: '8080' },
    ]);
  });

  it('counts labels and annotations the release sets, not ones others added', () => {
    const live = clone(deployment) as typeof deployment & { metadata: { annotations: Record<string, string> } };
    live.metadata.annotations['example.com/added'] = 'by-webhook';
    live.metadata.labels.app = 'changed';
    expect(compareObjects(clone(deployment), live, [])).toEqual([
      { path: '/metadata/labels/app', live: 'changed', desired: 'web' },
    ]);
    // An annotation the release sets and someone changed: drift, unless a rule ignores it.
    const desired = clone(deployment) as typeof live;
    desired.metadata.annotations['example.com/team'] = 'core';
    const edited = clone(desired);
    edited.metadata.annotations['example.com/team'] = 'other';
    expect(compareObjects(desired, edited, [])).toEqual([
      { path: '/metadata/annotations/example.com~1team', live: 'other', desired: 'core' },
    ]);
    expect(compareObjects(desired, edited, ['/metadata/annotations/example.com~1team'])).toEqual([]);
  });

  it('names a changed ConfigMap value, masks a password key', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings' },
      data: { color: 'blue', password: 'p4ssw0rd-long' },
    };
    const live = clone(cm);
    live.data.color = 'red';
    live.data.password = 'other-pass-long';
    const found = compareObjects(cm, live, []);
    expect(found).toEqual([
      { path: '/data/color', live: 'red', desired: 'blue' },
      { path: '/data/password', live: '[REDACTED]', desired: '[REDACTED]' },
    ]);
  });

  it("masks every value of a Secret's data", () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds' },
      type: 'Opaque',
      data: { username: Buffer.from('admin').toString('base64') },
    };
    const live = clone(secret);
    live.data.username = Buffer.from('root').toString('base64');
    const found = compareObjects(secret, live, []);
    expect(found).toEqual([{ path: '/data/username', live: '[REDACTED]', desired: '[REDACTED]' }]);
    // A whole data map removed: still masked.
    const emptied = clone(secret) as { data?: unknown };
    delete emptied.data;
    expect(compareObjects(secret, emptied as typeof secret, [])).toEqual([
      { path: '/data', live: '(absent)', desired: '[REDACTED]' },
    ]);
  });

  it('names a changed Service port', () => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web' },
      spec: { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    };
    const live = clone(svc);
    live.spec.ports[0]!.port = 8081;
    expect(compareObjects(svc, live, [])).toEqual([{ path: '/spec/ports/0/port', live: '8081', desired: '80' }]);
  });

  it('an ignore rule on one list item lines the rest up', () => {
    const live = clone(deployment);
    live.spec.template.spec.containers[0]!.env[0]!.value = 'debug';
    expect(compareObjects(clone(deployment), live, ['/spec/template/spec/containers/0/env/0'])).toEqual([]);
  });

  it('compares only the fields the manifest sets when there is no dry run to compare with', () => {
    const written = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'db', labels: { app: 'db' } },
      spec: { clusterIP: 'None', ports: [{ port: 5432 }] },
    };
    const live = {
      ...clone(written),
      metadata: { name: 'db', uid: 'u', labels: { app: 'db', extra: 'x' } },
      spec: {
        clusterIP: '10.96.0.44',
        clusterIPs: ['10.96.0.44'],
        ports: [{ port: 5432, protocol: 'TCP', targetPort: 5432 }],
        type: 'ClusterIP',
      },
    };
    expect(compareObjects(written, live, [], { onlySet: true })).toEqual([
      { path: '/spec/clusterIP', live: '10.96.0.44', desired: 'None' },
    ]);
  });

  it('cuts long values', () => {
    expect(renderValue('x'.repeat(500))).toBe(`${'x'.repeat(200)}...`);
    expect(renderValue({ a: 1 })).toBe('{"a":1}');
  });
});

describe('setAsWritten: no dry run needed', () => {
  // The manifest's object as written: fewer fields than the live one (no defaults, no status).
  const written = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: { app: 'web' } },
    spec: {
      replicas: 2,
      template: { spec: { containers: [{ name: 'web', image: 'nginx:1.27', args: ['--serve'] }] } },
    },
  };
  const live = {
    ...written,
    metadata: { ...written.metadata, uid: 'u-1', labels: { app: 'web', extra: 'by-a-controller' } },
    spec: {
      replicas: 2,
      progressDeadlineSeconds: 600,
      template: {
        spec: {
          dnsPolicy: 'ClusterFirst',
          containers: [{ name: 'web', image: 'nginx:1.27', args: ['--serve'], imagePullPolicy: 'IfNotPresent' }],
        },
      },
    },
    status: { replicas: 2 },
  };
  it('holds when every field written has that value live, whatever defaults and labels others added', () => {
    expect(setAsWritten(written, live, [])).toBe(true);
  });
  it('does not hold for a changed value, an item added to a list, a value written another way, a field gone', () => {
    const changed = clone(live);
    changed.spec.template.spec.containers[0]!.image = 'nginx:9';
    expect(setAsWritten(written, changed, [])).toBe(false);
    const appended = clone(live);
    appended.spec.template.spec.containers[0]!.args.push('--debug');
    expect(setAsWritten(written, appended, [])).toBe(false);
    const sidecar = clone(live);
    sidecar.spec.template.spec.containers.push({
      name: 'proxy',
      image: 'envoy:1',
      args: [],
      imagePullPolicy: 'IfNotPresent',
    });
    expect(setAsWritten(written, sidecar, [])).toBe(false);
    expect(setAsWritten({ ...written, spec: { ...written.spec, replicas: '2' } }, live, [])).toBe(false);
    const gone = clone(live) as { spec: Partial<typeof live.spec> };
    delete gone.spec.replicas;
    expect(setAsWritten(written, gone as typeof live, [])).toBe(false);
  });
  it('an ignored path does not count', () => {
    const scaled = clone(live);
    scaled.spec.replicas = 5;
    expect(setAsWritten(written, scaled, ['/spec/replicas'])).toBe(true);
    expect(setAsWritten(written, scaled, [])).toBe(false);
  });
});
