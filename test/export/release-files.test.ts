// The export's pure steps: the JSON6902 diff, which object goes to base, overlay or secrets, file
// names, and finding secret values in clear. Expected values written out by hand.
import { describe, expect, it } from 'vitest';
import { diffObjects } from '../../src/export/json-patch.js';
import { renderedObjects } from '../../src/export/manifest-documents.js';
import { splitOverlay } from '../../src/export/overlay-split.js';
import { fileNames, releaseFiles } from '../../src/export/release-files.js';
import { secretFields } from '../../src/export/secret-fields.js';
import { secretPaths, secretSubtree } from '../../src/export/secret-values.js';
import { SecretRegistry } from '../../src/common/secrets.js';

describe('diffObjects', () => {
  it('changes only the fields that differ; keys with / and ~ escaped', () => {
    const base = { spec: { replicas: 2, paused: false }, metadata: { annotations: { 'a/b~c': 'x', gone: 'y' } } };
    const full = { spec: { replicas: 3, paused: false }, metadata: { annotations: { 'a/b~c': 'z', added: 'w' } } };
    expect(diffObjects(base, full)).toEqual([
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'replace', path: '/metadata/annotations/a~1b~0c', value: 'z' },
      { op: 'remove', path: '/metadata/annotations/gone' },
      { op: 'add', path: '/metadata/annotations/added', value: 'w' },
    ]);
  });

  it('replaces a list that differs whole, and leaves an equal one alone', () => {
    expect(
      diffObjects({ args: ['a', 'b'], env: [{ name: 'X' }] }, { args: ['a', 'b', 'c'], env: [{ name: 'X' }] }),
    ).toEqual([{ op: 'replace', path: '/args', value: ['a', 'b', 'c'] }]);
  });

  it('a map that became a scalar is replaced; equal objects give no operation', () => {
    expect(diffObjects({ a: { b: 1 } }, { a: null })).toEqual([{ op: 'replace', path: '/a', value: null }]);
    expect(diffObjects({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
  });
});

const doc = (kind: string, name: string, extra = '') =>
  `---\n# Source: c/templates/${name}.yaml\napiVersion: ${kind === 'Deployment' ? 'apps/v1' : 'v1'}\nkind: ${kind}\nmetadata:\n  name: ${name}\n${extra}`;

describe('splitOverlay', () => {
  const vendor = renderedObjects(
    [
      doc('ConfigMap', 'settings', 'data:\n  level: info\n'),
      doc('Deployment', 'web', 'spec:\n  replicas: 2\n'),
      doc('Service', 'old'),
      doc('Secret', 'db', 'data:\n  p: eA==\n'),
    ].join(''),
  );
  const customer = renderedObjects(
    [
      doc('ConfigMap', 'settings', 'data:\n  level: info\n'),
      doc('Deployment', 'web', 'spec:\n  replicas: 5\n'),
      doc('Secret', 'db', 'data:\n  p: eQ==\n'),
      doc('Ingress', 'web'),
      doc('Pod', 'web-test', '  annotations:\n    helm.sh/hook: test\n'),
    ].join(''),
  );
  const plan = splitOverlay(vendor, customer);

  it('puts each object in its place', () => {
    expect(plan.base.map((o) => `${o.kind}/${o.name}`)).toEqual([
      'ConfigMap/settings',
      'Deployment/web',
      'Service/old',
    ]);
    expect(plan.patches.map((p) => [p.object.kind, p.operations])).toEqual([
      ['Deployment', [{ op: 'replace', path: '/spec/replicas', value: 5 }]],
    ]);
    expect(plan.added.map((o) => `${o.kind}/${o.name}`)).toEqual(['Ingress/web']);
    expect(plan.removed.map((o) => `${o.kind}/${o.name}`)).toEqual(['Service/old']);
    expect(plan.secrets.map((o) => o.text)).toEqual([
      '# Source: c/templates/db.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  p: eQ==\n',
    ]);
    expect(plan.tests.map((o) => o.name)).toEqual(['web-test']);
  });

  it('writes the kustomizations and patch files', () => {
    const files = releaseFiles(plan);
    expect([...files.keys()].sort()).toEqual([
      'base/configmap-settings.yaml',
      'base/deployment-web.yaml',
      'base/kustomization.yaml',
      'base/service-old.yaml',
      'overlay/ingress-web.yaml',
      'overlay/kustomization.yaml',
      'overlay/patches/deployment-web.json',
      'secrets/kustomization.yaml',
      'secrets/secret-db.yaml',
    ]);
    expect(files.get('overlay/kustomization.yaml')).toBe(
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        'resources:',
        '  - ../base',
        '  - ../secrets',
        '  - ingress-web.yaml',
        'patches:',
        '  - path: patches/deployment-web.json',
        '    target:',
        '      group: apps',
        '      version: v1',
        '      kind: Deployment',
        '      name: web',
        '  - patch: |',
        '      apiVersion: v1',
        '      kind: Service',
        '      metadata:',
        '        name: old',
        '      $patch: delete',
        '',
      ].join('\n'),
    );
  });

  it('an apiVersion change is written in full and left out of the base', () => {
    const v = renderedObjects('apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: t\n');
    const c = renderedObjects('apiVersion: example.com/v2\nkind: Thing\nmetadata:\n  name: t\n');
    const p = splitOverlay(v, c);
    expect([p.base.length, p.added.map((o) => o.apiVersion), p.inFull.map((f) => f.reason)]).toEqual([
      0,
      ['example.com/v2'],
      [
        "the customer's values change its apiVersion from example.com/v1 to example.com/v2, which a kustomize patch cannot do",
      ],
    ]);
  });
});

describe('fileNames', () => {
  it('kind-name, the namespace where two share both, then a counter', () => {
    const objects = renderedObjects(
      [
        'kind: ConfigMap\napiVersion: v1\nmetadata: {name: A, namespace: one}\n',
        'kind: ConfigMap\napiVersion: v1\nmetadata: {name: a, namespace: two}\n',
        'kind: ConfigMap\napiVersion: v1\nmetadata: {name: a, namespace: two}\n',
      ].join('---\n'),
    );
    expect([...fileNames(objects).values()]).toEqual([
      'configmap-a.yaml',
      'configmap-a.two.yaml',
      'configmap-a-2.yaml',
    ]);
  });
});

describe('secret values', () => {
  it('secretSubtree keeps only the secret leaves; secretPaths names them', () => {
    const secrets = new SecretRegistry();
    const tree = { web: { replicaCount: 3 }, database: { password: 'hunter22', existingSecret: 'db' } };
    expect(secretSubtree(tree, secrets.maskTree(tree))).toEqual({ database: { password: 'hunter22' } });
    expect(secretPaths(tree, secrets.maskTree(tree))).toEqual(['database.password']);
  });

  it('secretFields names the object and the field, never the value', () => {
    const secrets = new SecretRegistry();
    secrets.add('tok-123456');
    const objects = renderedObjects(
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  url: "https://u:tok-123456@host"\n  plain: ok\n',
    );
    expect(secretFields(objects, secrets)).toEqual([{ kind: 'ConfigMap', name: 'cm', path: '/data/url' }]);
  });
});
