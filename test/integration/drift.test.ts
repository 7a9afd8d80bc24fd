// The drift check and its correction on the real control plane: a fixture chart installed with the
// real pinned helm 4 and helm 3, then changed the way people change things (kubectl set image,
// set env, scale, edit, patch, annotate, delete, an object recreated), in two namespaces. The
// expected drift is written out by hand from what each step changed; the cluster's own state
// (kubectl) checks the correction.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { connectKube, type KubeClients } from '../../src/cluster/kube-client.js';
import { correctDrift } from '../../src/drift/correct-drift.js';
import { detectDrift, type ObjectDrift } from '../../src/drift/detect-drift.js';
import { parseIgnoreRules, type IgnoreRule } from '../../src/drift/ignore-rules.js';
import { releaseFromRecord } from '../../src/drift/release-manifest.js';
import { PreflightError } from '../../src/common/errors.js';
import { getJson, kubectl } from '../cluster/kube.js';
import { kubectlPath } from '../cluster/paths.js';
import { helm, helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'drift');
const opts = (namespace?: string) => ({ kubeconfig: kubeconfig(), ...(namespace ? { namespace } : {}) });
const newNamespace = namespacesDeletedAfterAll();
const replicasRule = parseIgnoreRules('Deployment/web:/spec/replicas', {
  option: '--drift-ignore',
  env: 'HELM_INSTALLER_DRIFT_IGNORE',
});
let kube: KubeClients;

beforeAll(async () => {
  kube = await kubeWith(kubeconfig());
});

async function kubeWith(file: string): Promise<KubeClients> {
  const before = process.env.KUBECONFIG;
  process.env.KUBECONFIG = file;
  try {
    return await connectKube();
  } finally {
    process.env.KUBECONFIG = before;
  }
}

/** The manifest of the release's last revision, from its record (no helm run). */
async function lastManifest(release: string, ns: string): Promise<string> {
  const list = await getJson<{ items: { metadata: { labels: Record<string, string> }; data: { release: string } }[] }>(
    ['get', 'secrets', '-l', `owner=helm,name=${release}`],
    opts(ns),
  );
  const last = list.items.sort((a, b) => Number(b.metadata.labels.version) - Number(a.metadata.labels.version))[0]!;
  return releaseFromRecord(last.data.release).manifest;
}

async function installFixture(
  bin: string,
  release: string,
  ns: string,
  other: string,
  set: string[] = [],
): Promise<void> {
  await helm(
    bin,
    [
      'upgrade',
      '--install',
      release,
      chart,
      '--namespace',
      ns,
      '--set',
      `otherNamespace=${other}`,
      ...set.flatMap((s) => ['--set', s]),
    ],
    { KUBECONFIG: kubeconfig() },
  );
}

/** Drifts as compared here: one line per object, then its fields. */
function shape(drifts: ObjectDrift[]): unknown[] {
  return drifts
    .map((d) => ({
      object: `${d.kind} ${d.namespace ?? ''}/${d.name}`,
      missing: d.missing,
      fields: d.fields,
      ...(d.refused ? { refused: d.refused } : {}),
    }))
    .sort((a, b) => a.object.localeCompare(b.object));
}

async function detect(release: string, ns: string, o: { rules?: IgnoreRule[] } = {}): Promise<ObjectDrift[]> {
  return detectDrift(kube, await lastManifest(release, ns), { releaseNamespace: ns, release, rules: o.rules ?? [] });
}

/** `kubectl edit` with a scripted editor: what a person does in vi, as kubectl records it. */
async function kubectlEdit(args: string[], sed: string): Promise<void> {
  const editor = join(tempDir('drift-editor'), 'editor.sh');
  writeFileSync(editor, `#!/bin/sh\nsed -i '${sed}' "$1"\n`, { mode: 0o755 });
  await execa(kubectlPath(), ['edit', ...args], { env: { KUBECONFIG: kubeconfig(), KUBE_EDITOR: editor } });
}

async function managers(kind: string, name: string, ns: string): Promise<{ manager: string; operation: string }[]> {
  const o = await getJson(['get', kind, name, '--show-managed-fields'], opts(ns));
  return o.metadata.managedFields.map((m: { manager: string; operation: string }) => ({
    manager: m.manager,
    operation: m.operation,
  }));
}

/** The fixture installed as release shop with `bin` into two new namespaces, `prefix` and `prefix`-other. */
async function installedFixture(bin: string, prefix: string): Promise<[string, string]> {
  const [ns, other] = [await newNamespace(prefix), await newNamespace(`${prefix}-other`)];
  await installFixture(bin, 'shop', ns, other);
  return [ns, other];
}

/** No drift in release shop as installed; then its detection timed and printed (a figure, never asserted). */
async function noDriftYet(ns: string, helmName: string): Promise<void> {
  expect(await detect('shop', ns)).toEqual([]);
  const times = await timeDetection('shop', ns);
  console.log(`detectDrift, 8 objects unchanged, ${helmName} release: ${times.join(', ')} ms`);
}

/** Times n detections of an unchanged release, in ms: measured, reported, never asserted. */
async function timeDetection(release: string, ns: string, n = 5): Promise<number[]> {
  const manifest = await lastManifest(release, ns);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    expect(await detectDrift(kube, manifest, { releaseNamespace: ns, release, rules: [] })).toEqual([]);
    times.push(Math.round(performance.now() - started));
  }
  return times;
}

describe('drift with helm 4 (server-side apply)', () => {
  it('finds each change by path and manager in both namespaces, puts it back, and helm upgrades afterwards without a conflict', async () => {
    const [ns, other] = await installedFixture(helm4, 'drift4');
    // helm 4 applies server-side as the field manager "helm" (whatever its executable is called).
    expect(await managers('deployment', 'web', ns)).toContainEqual({ manager: 'helm', operation: 'Apply' });
    await noDriftYet(ns, 'helm 4');

    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:2.0'], opts(ns));
    await kubectl(['set', 'env', 'deployment/web', 'MODE=debug'], opts(ns));
    await kubectl(['annotate', 'deployment/web', 'example.com/team=other', '--overwrite'], opts(ns));
    await kubectlEdit(['configmap/settings', '-n', ns], 's/^  color: blue$/  color: green/');
    await kubectl(
      ['patch', 'configmap/settings', '--type', 'merge', '-p', '{"data":{"password":"changed-by-hand"}}'],
      opts(ns),
    );
    await kubectl(
      ['patch', 'service/web', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/ports/0/port","value":8081}]'],
      opts(ns),
    );
    await kubectl(
      ['patch', 'secret/creds', '--type', 'merge', '-p', '{"stringData":{"password":"another-secret-value"}}'],
      opts(ns),
    );
    await kubectl(['delete', 'configmap/cache'], opts(ns));
    await kubectl(['patch', 'configmap/remote', '--type', 'merge', '-p', '{"data":{"region":"us"}}'], opts(other));

    const drifts = await detect('shop', ns);
    expect(shape(drifts)).toEqual([
      { object: `ConfigMap ${ns}/cache`, missing: true, fields: [] },
      {
        object: `ConfigMap ${ns}/settings`,
        missing: false,
        fields: [
          { path: '/data/color', live: 'green', desired: 'blue', manager: 'kubectl-edit' },
          { path: '/data/password', live: '[REDACTED]', desired: '[REDACTED]', manager: 'kubectl-patch' },
        ],
      },
      {
        object: `ConfigMap ${other}/remote`,
        missing: false,
        fields: [{ path: '/data/region', live: 'us', desired: 'eu', manager: 'kubectl-patch' }],
      },
      {
        object: `Deployment ${ns}/web`,
        missing: false,
        fields: [
          {
            path: '/metadata/annotations/example.com~1team',
            live: 'other',
            desired: 'core',
            manager: 'kubectl-annotate',
          },
          {
            path: '/spec/template/spec/containers/0/env/0/value',
            live: 'debug',
            desired: 'prod',
            manager: 'kubectl-set',
          },
          {
            path: '/spec/template/spec/containers/0/image',
            live: 'example.invalid/web:2.0',
            desired: 'example.invalid/web:1.0',
            manager: 'kubectl-set',
          },
        ],
      },
      {
        object: `Secret ${ns}/creds`,
        missing: false,
        fields: [{ path: '/data/password', live: '[REDACTED]', desired: '[REDACTED]', manager: 'kubectl-patch' }],
      },
      // Apply keys Service ports by number: its dry run would add port 80 beside 8081, both named http.
      {
        object: `Service ${ns}/web`,
        missing: false,
        fields: [{ path: '/spec/ports/0/port', live: '8081', desired: '80', manager: 'kubectl-patch' }],
        refused: 'spec.ports[1].name: Duplicate value: [REDACTED]',
      },
    ]);
    for (const secret of [
      'changed-by-hand',
      'another-secret-value',
      'fixture-db-password',
      'fixture-settings-password',
    ])
      expect(JSON.stringify(drifts)).not.toContain(secret);

    const result = await correctDrift(kube, await lastManifest('shop', ns), drifts, {
      releaseNamespace: ns,
      release: 'shop',
      rules: [],
    });
    expect(result.failed).toEqual([]);
    expect(result.corrected).toHaveLength(6);
    expect(await detect('shop', ns)).toEqual([]);
    // Put back as the chart has them, read from the cluster itself.
    const web = await getJson(['get', 'deployment', 'web'], opts(ns));
    expect(web.spec.template.spec.containers[0].image).toBe('example.invalid/web:1.0');
    expect(web.spec.template.spec.containers[0].env[0]).toEqual({ name: 'MODE', value: 'prod' });
    expect(web.metadata.annotations['example.com/team']).toBe('core');
    expect((await getJson(['get', 'configmap', 'settings'], opts(ns))).data).toEqual({
      color: 'blue',
      password: 'fixture-settings-password',
    });
    expect((await getJson(['get', 'configmap', 'cache'], opts(ns))).data).toEqual({ size: '64' });
    expect((await getJson(['get', 'configmap', 'remote'], opts(other))).data).toEqual({ region: 'eu' });
    expect((await getJson(['get', 'service', 'web'], opts(ns))).spec.ports[0].port).toBe(80);
    expect(Buffer.from((await getJson(['get', 'secret', 'creds'], opts(ns))).data.password, 'base64').toString()).toBe(
      'fixture-db-password',
    );

    // The fields were taken back by helm's own manager: helm's next server-side upgrade (no
    // --force-conflicts) finds no conflict with kubectl-set and friends.
    await installFixture(helm4, 'shop', ns, other, ['mode=staging']);
    expect((await getJson(['get', 'deployment', 'web'], opts(ns))).spec.template.spec.containers[0].env[0].value).toBe(
      'staging',
    );
    expect(await detect('shop', ns)).toEqual([]);
  });

  it('an ignore rule keeps a scale through detection and correction; an immutable field is named and refused', async () => {
    const [ns] = await installedFixture(helm4, 'drift4-ignore');
    await kubectl(['scale', 'deployment/web', '--replicas=5'], opts(ns));
    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:3.0'], opts(ns));
    const image = {
      path: '/spec/template/spec/containers/0/image',
      live: 'example.invalid/web:3.0',
      desired: 'example.invalid/web:1.0',
      manager: 'kubectl-set',
    };
    expect(shape(await detect('shop', ns))).toEqual([
      {
        object: `Deployment ${ns}/web`,
        missing: false,
        fields: [{ path: '/spec/replicas', live: '5', desired: '2', manager: 'kubectl' }, image],
      },
    ]);
    const drifts = await detect('shop', ns, { rules: replicasRule });
    expect(shape(drifts)).toEqual([{ object: `Deployment ${ns}/web`, missing: false, fields: [image] }]);

    const result = await correctDrift(kube, await lastManifest('shop', ns), drifts, {
      releaseNamespace: ns,
      release: 'shop',
      rules: replicasRule,
    });
    expect(result).toMatchObject({ failed: [], corrected: [{ kind: 'Deployment', name: 'web' }] });
    const web = await getJson(['get', 'deployment', 'web'], opts(ns));
    expect(web.spec.replicas).toBe(5);
    expect(web.spec.template.spec.containers[0].image).toBe('example.invalid/web:1.0');
    expect(await detect('shop', ns, { rules: replicasRule })).toEqual([]);

    // The headless Service recreated by hand as a plain one: its clusterIP cannot change back.
    const db = await getJson(['get', 'service', 'db'], opts(ns));
    delete db.spec.clusterIP;
    delete db.spec.clusterIPs;
    for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields']) delete db.metadata[k];
    await kubectl(['delete', 'service/db'], opts(ns));
    await kubectl(['create', '-f', '-'], { ...opts(ns), input: JSON.stringify(db) });
    const ip = (await getJson(['get', 'service', 'db'], opts(ns))).spec.clusterIP as string;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const immutable = await detect('shop', ns, { rules: replicasRule });
    expect(shape(immutable)).toEqual([
      {
        object: `Service ${ns}/db`,
        missing: false,
        fields: [{ path: '/spec/clusterIP', live: ip, desired: 'None' }],
        refused: expect.stringMatching(/spec\.clusterIP/),
      },
    ]);
    const refused = await correctDrift(kube, await lastManifest('shop', ns), immutable, {
      releaseNamespace: ns,
      release: 'shop',
      rules: replicasRule,
    });
    expect(refused.corrected).toEqual([]);
    expect(refused.failed).toHaveLength(1);
    expect(refused.failed[0]!.reason).toMatch(/spec\.clusterIP/);
    expect(refused.failed[0]!.reason).not.toContain(ip);
    console.log(`immutable field refused: ${refused.failed[0]!.reason}`);
  });

  it('missing RBAC to read or to dry-run a kind is exit 6 naming the kind, namespace and verb', async () => {
    const [ns, other] = await installedFixture(helm4, 'drift4-rbac');
    const manifest = await lastManifest('shop', ns);
    const everything = ['configmaps', 'secrets', 'services'];
    const noDeploymentGet = await identity(ns, other, [
      { apiGroups: [''], resources: everything, verbs: ['get', 'patch'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['patch'] },
    ]);
    const error = await detectDrift(await kubeWith(noDeploymentGet), manifest, {
      releaseNamespace: ns,
      release: 'shop',
      rules: [],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as PreflightError).exitCode).toBe(6);
    expect((error as Error).message).toBe(
      `drift check: get Deployment web in namespace ${ns} is not allowed: the installer may not get Deployment (API group apps) in namespace ${ns}`,
    );

    // The dry run (a patch) is asked only of an object that does not hold what the manifest sets as
    // written: a Secret (stringData is stored as data), and here a ConfigMap changed by hand.
    await kubectl(['patch', 'configmap/cache', '--type', 'merge', '-p', '{"data":{"size":"128"}}'], opts(ns));
    const noPatch = await identity(ns, other, [
      { apiGroups: [''], resources: everything, verbs: ['get'] },
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['get', 'patch'] },
    ]);
    const denied = await detectDrift(await kubeWith(noPatch), manifest, {
      releaseNamespace: ns,
      release: 'shop',
      rules: [],
    }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(PreflightError);
    expect((denied as Error).message).toMatch(
      new RegExp(`^drift check: patch (ConfigMap cache|Secret creds) in namespace ${ns} is not allowed`),
    );
  });
});

describe('drift with helm 3 (client-side apply)', () => {
  it('no false drift on objects helm 3 created; changes found, put back, and helm 3 upgrades afterwards', async () => {
    const [ns, other] = await installedFixture(helm3, 'drift3');
    // helm 3 writes with updates (create and patch, no apply), as the same manager "helm".
    expect(await managers('deployment', 'web', ns)).toContainEqual({ manager: 'helm', operation: 'Update' });
    await noDriftYet(ns, 'helm 3');

    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:2.0'], opts(ns));
    await kubectl(['delete', 'configmap/cache'], opts(ns));
    await kubectl(['patch', 'configmap/remote', '--type', 'merge', '-p', '{"data":{"region":"us"}}'], opts(other));
    const drifts = await detect('shop', ns);
    expect(shape(drifts)).toEqual([
      { object: `ConfigMap ${ns}/cache`, missing: true, fields: [] },
      {
        object: `ConfigMap ${other}/remote`,
        missing: false,
        fields: [{ path: '/data/region', live: 'us', desired: 'eu', manager: 'kubectl-patch' }],
      },
      {
        object: `Deployment ${ns}/web`,
        missing: false,
        fields: [
          {
            path: '/spec/template/spec/containers/0/image',
            live: 'example.invalid/web:2.0',
            desired: 'example.invalid/web:1.0',
            manager: 'kubectl-set',
          },
        ],
      },
    ]);
    const result = await correctDrift(kube, await lastManifest('shop', ns), drifts, {
      releaseNamespace: ns,
      release: 'shop',
      rules: [],
    });
    expect(result.failed).toEqual([]);
    expect(await detect('shop', ns)).toEqual([]);
    expect((await getJson(['get', 'deployment', 'web'], opts(ns))).spec.template.spec.containers[0].image).toBe(
      'example.invalid/web:1.0',
    );

    await installFixture(helm3, 'shop', ns, other, ['mode=staging', 'image=example.invalid/web:1.1']);
    const web = await getJson(['get', 'deployment', 'web'], opts(ns));
    expect(web.spec.template.spec.containers[0]).toMatchObject({
      image: 'example.invalid/web:1.1',
      env: [{ name: 'MODE', value: 'staging' }, expect.anything()],
    });
    expect(await detect('shop', ns)).toEqual([]);
  });
});

/** A ServiceAccount bound to `rules` in both namespaces; a kubeconfig with its token. */
async function identity(ns: string, other: string, rules: object[]): Promise<string> {
  const name = `drift-${Math.random().toString(36).slice(2, 8)}`;
  const subject = { kind: 'ServiceAccount', name, namespace: ns };
  const docs = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } },
    ...[ns, other].flatMap((namespace) => [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace }, rules },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [subject],
      },
    ]),
  ];
  await kubectl(['apply', '-f', '-'], { ...opts(), input: docs.map((d) => stringify(d)).join('---\n') });
  const token = (await kubectl(['create', 'token', name, '--namespace', ns, '--duration', '1h'], opts())).stdout.trim();
  const admin = await getJson(['config', 'view', '--raw', '--minify'], opts());
  const file = join(tempDir('drift-kubeconfig'), 'kubeconfig');
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: admin.clusters[0].cluster }],
      users: [{ name, user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: name, namespace: ns } }],
      'current-context': 'c',
    }),
  );
  return file;
}
