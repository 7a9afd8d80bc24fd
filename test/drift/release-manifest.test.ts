// The pure parts around the drift check: the release's manifest read from its record, its objects
// placed as helm placed them, ignored fields kept live when correcting, refusals named without
// values, and the bound on concurrent requests.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { ResourceIndex } from '../../src/cluster/capabilities.js';
import { keepIgnored, repairOps } from '../../src/drift/correct-drift.js';
import { refusal } from '../../src/drift/refusal.js';
import { mapBounded } from '../../src/drift/detect-drift.js';
import { manifestObjects, placeObjects } from '../../src/drift/manifest-objects.js';
import { ObjectApiError } from '../../src/cluster/object-client.js';
import { releaseFromRecord } from '../../src/drift/release-manifest.js';
import { widgetCrdYaml } from '../fixtures/widget-crd.js';

const manifest = `---
# Source: shop/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  since: 2026-11-24
  enabled: "true"
---
# Source: shop/templates/empty.yaml
---
# Source: shop/templates/other-ns.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: remote
  namespace: elsewhere
---
# Source: shop/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: shop-reader
  namespace: ignored-by-the-api
rules: []
---
# Source: shop/templates/list.yaml
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ServiceAccount
    metadata:
      name: worker
`;

const resources: ResourceIndex = new Map([
  ['v1:ConfigMap', { group: '', resource: 'configmaps', namespaced: true }],
  ['v1:ServiceAccount', { group: '', resource: 'serviceaccounts', namespaced: true }],
  [
    'rbac.authorization.k8s.io/v1:ClusterRole',
    { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', namespaced: false },
  ],
]);

describe('the manifest as helm applied it', () => {
  it('parses every object, Lists flattened, empty documents skipped, timestamps kept as text', () => {
    const objects = manifestObjects(manifest);
    expect(objects.map((o) => `${o.kind}/${(o.metadata as { name: string }).name}`)).toEqual([
      'ConfigMap/settings',
      'ConfigMap/remote',
      'ClusterRole/shop-reader',
      'ServiceAccount/worker',
    ]);
    expect((objects[0] as { data: unknown }).data).toEqual({ since: '2026-11-24', enabled: 'true' });
  });

  it('withoutCrds: a document that is surely one CRD is left out unread, anything less sure is read', () => {
    const crd = widgetCrdYaml({ source: 'shop/crds/widgets.yaml', rest: '  versions: [broken\n' });
    // Not valid YAML: it is left unread (the RBAC preflight and the CRD step read it, and refuse it).
    expect(
      manifestObjects(`${manifest}${crd}`, { withoutCrds: true }).map((o) => (o.metadata as { name: string }).name),
    ).toEqual(['settings', 'remote', 'shop-reader', 'worker']);
    // `kind` twice at column 0: not surely a CRD, so it is read (and refused here).
    expect(() => manifestObjects(`${crd}kind: CustomResourceDefinition\n`, { withoutCrds: true })).toThrow(
      /not valid YAML/,
    );
  });

  it("places each object in helm's namespace with helm's metadata, and names its REST path", () => {
    const placed = placeObjects(manifestObjects(manifest), resources, { releaseNamespace: 'shop', release: 'web' });
    expect(placed.map((p) => [p.kind, p.namespace, p.path])).toEqual([
      ['ConfigMap', 'shop', '/api/v1/namespaces/shop/configmaps/settings'],
      ['ConfigMap', 'elsewhere', '/api/v1/namespaces/elsewhere/configmaps/remote'],
      ['ClusterRole', undefined, '/apis/rbac.authorization.k8s.io/v1/clusterroles/shop-reader'],
      ['ServiceAccount', 'shop', '/api/v1/namespaces/shop/serviceaccounts/worker'],
    ]);
    expect(placed[0]!.body.metadata).toEqual({
      name: 'settings',
      namespace: 'shop',
      labels: { 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'meta.helm.sh/release-name': 'web', 'meta.helm.sh/release-namespace': 'shop' },
    });
    expect((placed[2]!.body.metadata as { namespace?: string }).namespace).toBeUndefined();
  });

  it('a kind the cluster does not serve has no path (the object cannot exist)', () => {
    const placed = placeObjects(
      [{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }],
      resources,
      { releaseNamespace: 'shop', release: 'web' },
    );
    expect(placed[0]).toMatchObject({ kind: 'Widget', namespace: 'shop' });
    expect(placed[0]!.path).toBeUndefined();
  });

  it('reads the manifest from a release record (base64 of gzip of JSON, base64 again by the API)', () => {
    const record = {
      name: 'web',
      namespace: 'shop',
      version: 3,
      info: { status: 'deployed' },
      manifest: '---\nkind: ConfigMap\n',
    };
    const inner = gzipSync(Buffer.from(JSON.stringify(record))).toString('base64');
    const dataRelease = Buffer.from(inner).toString('base64');
    expect(releaseFromRecord(dataRelease)).toEqual({
      name: 'web',
      namespace: 'shop',
      revision: 3,
      manifest: '---\nkind: ConfigMap\n',
    });
    expect(() => releaseFromRecord(undefined)).toThrow('the release record has no data.release');
  });
});

describe('correcting', () => {
  const body = { kind: 'Deployment', spec: { replicas: 3, template: { metadata: { annotations: { a: '1' } } } } };
  const owned = (manager: string) => ({
    metadata: { managedFields: [{ manager, operation: 'Update', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] },
    spec: { replicas: 7 },
  });
  it('leaves an ignored field another manager owns to it, and keeps one only helm owns at its live value', () => {
    expect(keepIgnored(body, owned('kubectl'), ['/spec/replicas'], 'helm')).toEqual({
      kind: 'Deployment',
      spec: { template: body.spec.template },
    });
    expect(keepIgnored(body, owned('helm'), ['/spec/replicas'], 'helm')).toEqual({
      ...body,
      spec: { ...body.spec, replicas: 7 },
    });
    expect(keepIgnored(body, { spec: {} }, ['/spec/template/metadata/annotations/a'], 'helm')).toEqual({
      kind: 'Deployment',
      spec: { replicas: 3, template: { metadata: { annotations: {} } } },
    });
    expect(keepIgnored(body, {}, [], 'helm')).toBe(body);
  });

  it('repairs in place: the fields the manifest sets, at their paths in the live object', () => {
    const svc = {
      kind: 'Service',
      metadata: { name: 'web', annotations: { a: '1' } },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    };
    const live = {
      kind: 'Service',
      metadata: { name: 'web', uid: 'u' },
      spec: { clusterIP: '10.0.0.1', ports: [{ name: 'http', port: 8081, targetPort: 'http', protocol: 'TCP' }] },
    };
    expect(repairOps(svc, live, [])).toEqual([
      { op: 'add', path: '/metadata/annotations', value: { a: '1' } },
      { op: 'replace', path: '/spec/ports/0/port', value: 80 },
    ]);
    expect(repairOps(svc, live, ['/spec/ports/0/port', '/metadata/annotations'])).toEqual([]);
  });

  it('names the refused field, never its value', () => {
    const status = {
      kind: 'Status',
      status: 'Failure',
      message:
        'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set',
      reason: 'Invalid',
      details: {
        name: 'web',
        kind: 'services',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: []string{"10.96.0.99"}: may not change once set',
            field: 'spec.clusterIPs[0]',
          },
        ],
      },
      code: 422,
    };
    expect(refusal(new ObjectApiError(422, JSON.stringify(status)))).toBe(
      'spec.clusterIPs[0]: may not change once set (value [REDACTED])',
    );
    const forbidden = {
      ...status,
      message:
        'StatefulSet.apps "db" is invalid: spec: Forbidden: updates to statefulset spec for fields other than \'replicas\' are forbidden',
      details: {
        causes: [
          {
            reason: 'FieldValueForbidden',
            message: "Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden",
            field: 'spec',
          },
        ],
      },
    };
    expect(refusal(new ObjectApiError(422, JSON.stringify(forbidden)))).toBe(
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden",
    );
    expect(
      refusal(new ObjectApiError(400, JSON.stringify({ message: 'data: Invalid value: "s3cr3t-value": bad' }))),
    ).toBe('data: bad (value [REDACTED])');
    const duplicate = {
      message: 'Service "web" is invalid: spec.ports[1].name: Duplicate value: "http"',
      details: {
        causes: [{ reason: 'FieldValueDuplicate', message: 'Duplicate value: "http"', field: 'spec.ports[1].name' }],
      },
    };
    expect(refusal(new ObjectApiError(422, JSON.stringify(duplicate)))).toBe(
      'spec.ports[1].name: Duplicate value: [REDACTED]',
    );
  });
});

describe('mapBounded', () => {
  it('keeps order and never runs more than the limit at once', async () => {
    let running = 0;
    let most = 0;
    const out = await mapBounded([5, 1, 4, 2, 3, 0, 6, 7, 8, 9], 3, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, n));
      running--;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0, 60, 70, 80, 90]);
    expect(most).toBe(3);
  });
  it('starts nothing after a failure', async () => {
    const started: number[] = [];
    const run = mapBounded([1, 2, 3, 4, 5, 6], 2, async (n) => {
      started.push(n);
      await new Promise((r) => setTimeout(r, 5));
      if (n === 1) throw new Error('forbidden');
      return n;
    });
    await expect(run).rejects.toThrow('forbidden');
    await new Promise((r) => setTimeout(r, 30));
    expect(started).toEqual([1, 2]);
  });
});
