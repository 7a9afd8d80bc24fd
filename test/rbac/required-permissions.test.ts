// What the RBAC preflight asks for, and whether the Role/ClusterRole shipped in manifests/ grant
// it for everything the bundled chart renders (CRDs from crds/ included, every optional kind on).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { groupDenied } from '../../src/rbac/rbac-preflight.js';
import {
  crdResources,
  describePermission,
  renderedObjects,
  requiredPermissions,
  type RenderedObject,
} from '../../src/rbac/required-permissions.js';
import { type ResourceInfo } from '../../src/cluster/capabilities.js';
import { appDir, chartDir, helm4, repoRoot } from '../helpers.js';

// Built-in kinds as the API server's discovery names them (written out here, not derived).
const BUILTIN: Record<string, ResourceInfo> = {
  'v1:ConfigMap': { group: '', resource: 'configmaps', namespaced: true },
  'v1:Secret': { group: '', resource: 'secrets', namespaced: true },
  'v1:Service': { group: '', resource: 'services', namespaced: true },
  'v1:ServiceAccount': { group: '', resource: 'serviceaccounts', namespaced: true },
  'v1:Pod': { group: '', resource: 'pods', namespaced: true },
  'apps/v1:Deployment': { group: 'apps', resource: 'deployments', namespaced: true },
  'apps/v1:StatefulSet': { group: 'apps', resource: 'statefulsets', namespaced: true },
  'batch/v1:Job': { group: 'batch', resource: 'jobs', namespaced: true },
  'batch/v1:CronJob': { group: 'batch', resource: 'cronjobs', namespaced: true },
  'networking.k8s.io/v1:Ingress': { group: 'networking.k8s.io', resource: 'ingresses', namespaced: true },
  'apiextensions.k8s.io/v1:CustomResourceDefinition': {
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    namespaced: false,
  },
};

describe('renderedObjects', () => {
  it('reads the head of every object: Lists expanded, empty and comment-only documents skipped, quoted and flow-style names, a document the fast reader leaves (an anchor)', () => {
    const manifests = `# Source: c/templates/empty.yaml
---
# Source: c/templates/list.yaml
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: a}
  - apiVersion: v1
    kind: Secret
    metadata:
      name: "b"
      namespace: other
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: 'web'
  labels: &l {app: web}
spec:
  selector: {matchLabels: *l}
---
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: jobs}
`;
    expect(renderedObjects(manifests)).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: undefined },
      { apiVersion: 'v1', kind: 'Secret', name: 'b', namespace: 'other' },
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: undefined },
      { apiVersion: 'batch/v1', kind: 'Job', name: 'migrate', namespace: 'jobs' },
    ]);
  });

  it('stops on a rendered document that is not YAML, naming where (exit 3), instead of leaving its object out of the check', () => {
    expect(() => renderedObjects('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a\n')).toThrow(
      /not valid YAML \(document 1, line \d+ of the stream\)/,
    );
  });
});

describe('requiredPermissions', () => {
  const manifests = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: other}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
---
apiVersion: unknown.example/v1
kind: Gadget
metadata: {name: g}
`;
  const objects = renderedObjects(manifests);
  const crds = crdResources(objects);
  const resolve = (o: RenderedObject) => BUILTIN[`${o.apiVersion}:${o.kind}`] ?? crds.get(`${o.apiVersion}:${o.kind}`);

  it('asks per object for what helm does to it, in its namespace; the release records; CRDs never deleted; unknown kinds left to helm', () => {
    const got = requiredPermissions(objects, 'shop', resolve)
      .map((p) => `${describePermission(p)} <- ${p.for.join(',')}`)
      .sort();
    const rw = ['create', 'delete', 'get', 'list', 'patch', 'watch'];
    const expected = [
      ...['create', 'delete', 'get', 'list', 'update'].map(
        (v) => `${v} secrets in namespace shop <- the release records`,
      ),
      ...['get', 'patch'].map((v) => `${v} namespaces in namespace shop <- the release namespace`),
      ...['create', 'delete', 'get', 'update'].map(
        (v) => `${v} leases.coordination.k8s.io in namespace shop <- the installer Lease`,
      ),
      ...['statefulsets.apps', 'daemonsets.apps', 'jobs.batch', 'pods', 'events'].map(
        (r) => `list ${r} in namespace shop <- the installer's health checks`,
      ),
      `get pods/log in namespace shop <- the installer's health checks`,
      ...rw.map(
        (v) =>
          `${v} deployments.apps in namespace shop <- Deployment/web${v === 'list' ? ",the installer's health checks" : ''}`,
      ),
      ...rw.map((v) => `${v} configmaps in namespace other <- ConfigMap/cfg`),
      ...rw.map((v) => `${v} widgets.example.com in namespace shop <- Widget/w`),
      ...['create', 'get', 'list', 'patch', 'watch'].map(
        (v) =>
          `${v} customresourcedefinitions.apiextensions.k8s.io (cluster-wide) <- CustomResourceDefinition/widgets.example.com`,
      ),
    ].sort();
    expect(got).toEqual(expected);
  });

  it('groups denials per resource and namespace for the summary', () => {
    const denied = requiredPermissions(objects, 'shop', resolve).filter(
      (p) => p.resource === 'deployments' && ['create', 'patch'].includes(p.verb),
    );
    expect(groupDenied(denied)).toEqual(['  deployments.apps in namespace shop: create, patch (Deployment/web)']);
  });
});

describe('manifests/installer.yaml RBAC', () => {
  const docs = parseAllDocuments(readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8')).map((d) =>
    d.toJS(),
  );
  const job = docs.find((d) => d.kind === 'Job');
  const namespace = job.metadata.namespace as string;
  const sa = job.spec.template.spec.serviceAccountName as string;
  const bound = (bindingKind: string, roleKind: string) => {
    const names = docs
      .filter(
        (d) =>
          d.kind === bindingKind &&
          d.roleRef.kind === roleKind &&
          d.subjects.some((s: any) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === namespace),
      )
      .map((d) => d.roleRef.name);
    return docs.filter((d) => d.kind === roleKind && names.includes(d.metadata.name)).flatMap((d) => d.rules);
  };
  const roleRules = bound('RoleBinding', 'Role');
  const clusterRules = bound('ClusterRoleBinding', 'ClusterRole');
  const grants = (rules: any[], group: string, resource: string, verb: string) =>
    rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));

  it("grants everything the bundled chart needs (every optional kind on), and nothing cluster-wide but its CRD, that CRD's storage migration and a list of the classes", () => {
    const rendered = execFileSync(helm4, [
      'template',
      'storefront',
      chartDir,
      '--namespace',
      namespace,
      '--include-crds',
      '-f',
      join(appDir, 'examples', 'customer-values.yaml'),
      '--set',
      'web.ingress.tls=true',
      '--set',
      'database.password=x',
      '--set',
      'tests.enabled=true',
    ]).toString();
    const objects = renderedObjects(rendered);
    const crds = crdResources(objects);
    const unresolved = objects.filter(
      (o) => !BUILTIN[`${o.apiVersion}:${o.kind}`] && !crds.has(`${o.apiVersion}:${o.kind}`),
    );
    expect(unresolved).toEqual([]);
    const needed = requiredPermissions(
      objects,
      namespace,
      (o) => BUILTIN[`${o.apiVersion}:${o.kind}`] ?? crds.get(`${o.apiVersion}:${o.kind}`),
    );
    expect(needed.map((p) => p.resource)).toContain('ingresses');
    const missing = needed
      .filter((p) => !grants(p.namespace ? roleRules : clusterRules, p.group, p.resource, p.verb))
      .map(describePermission);
    expect(missing).toEqual([]);
    expect(clusterRules).toEqual([
      {
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        verbs: ['get', 'list', 'watch', 'create', 'patch'],
      },
      // src/crds/upgrade-crds.ts checkMigrationAccess asks exactly these for the chart's one kind.
      { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions/status'], verbs: ['patch'] },
      { apiGroups: ['storefront.example.com'], resources: ['promotions'], verbs: ['list', 'update'] },
      // src/reconcile/cluster-fit.ts lists the classes a chart names (read only).
      { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['list'] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingressclasses'], verbs: ['list'] },
      { apiGroups: ['scheduling.k8s.io'], resources: ['priorityclasses'], verbs: ['list'] },
      { apiGroups: ['node.k8s.io'], resources: ['runtimeclasses'], verbs: ['list'] },
    ]);
    expect(docs.filter((d) => d.roleRef?.name === 'cluster-admin')).toEqual([]);
  });
});

describe('kots/installer-job.yaml RBAC', () => {
  const read = (file: string) =>
    parseAllDocuments(readFileSync(join(repoRoot, file), 'utf8'))
      .map((d) => d.toJS())
      .filter(Boolean);
  const kots = read('kots/installer-job.yaml');
  const plain = read('manifests/installer.yaml');
  const rulesOf = (docs: any[], kind: string) => docs.filter((d) => d.kind === kind).map((d) => d.rules);

  it('grants what manifests/ grants (checked against the chart above), binds no cluster-admin, and names cluster-scoped objects per namespace', () => {
    expect(rulesOf(kots, 'Role')).toEqual(rulesOf(plain, 'Role'));
    expect(rulesOf(kots, 'ClusterRole')).toEqual(rulesOf(plain, 'ClusterRole'));
    expect(kots.filter((d) => d.roleRef?.name === 'cluster-admin')).toEqual([]);
    for (const d of kots.filter((x) => x.kind.startsWith('Cluster')))
      expect(d.metadata.name).toMatch(/repl\{\{ Namespace \}\}$/);
    const binding = kots.find((d) => d.kind === 'ClusterRoleBinding');
    expect(binding.roleRef.name).toBe(kots.find((d) => d.kind === 'ClusterRole').metadata.name);
  });
});
