// `kubectl kots remove --undeploy` after an install with --app-slug: KOTS's own rule
// (kots-remove.ts) applied to the namespace, and what of the install is left afterwards, on
// helm 4 and helm 3. Expected leftovers are named from KOTS's and Kubernetes' rules, not from
// the installer: the PersistentVolumeClaim a StatefulSet's volumeClaimTemplates made (never
// annotated: the field is immutable), the pod of a kept hook Job (a batch/v1 Job deleted with
// the server's defaults orphans its pods), and on helm 3 the hook Job itself (helm 3 never
// post-renders hooks).
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectKube } from '../../src/cluster/kube-client.js';
import { objectClient, type ObjectClient } from '../../src/cluster/object-client.js';
import { helm3, helm4, repoRoot } from '../helpers.js';
import { install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { kotsClearNamespace, listAll, preferredNamespacedResources, type Resource } from './kots-remove.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'app-slug');
const slug = 'acme-shop';
const namespaceFor = namespacesDeletedAfterAll();
let client: ObjectClient;
let resources: Resource[];

beforeAll(async () => {
  process.env.KUBECONFIG = kubeconfig();
  client = await objectClient(await connectKube());
  resources = await preferredNamespacedResources(client);
});

/** Every object of the namespace as `resource/name`; Events aside (the cluster's record, expiring by themselves). */
async function objectsIn(namespace: string): Promise<Map<string, { annotations?: Record<string, string> }>> {
  const all = await listAll(
    client,
    resources.filter((r) => r.resource !== 'events'),
    namespace,
  );
  return new Map(
    all.map(({ r, item }) => [`${r.resource}/${item.metadata.name}`, { annotations: item.metadata.annotations }]),
  );
}

/** A new namespace once its controllers have made what every namespace gets (so it is not counted as the install's). */
async function settledNamespace(prefix: string): Promise<{ ns: string; before: Map<string, unknown> }> {
  const ns = await namespaceFor(prefix);
  for (let i = 0; i < 60; i++) {
    const before = await objectsIn(ns);
    if (before.has('serviceaccounts/default') && before.has('configmaps/kube-root-ca.crt')) return { ns, before };
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`namespace ${ns}: no default ServiceAccount or kube-root-ca.crt after 30 s`);
}

/** What of `created` is still there once the garbage collector has had its time (it only removes). */
async function leftOf(namespace: string, created: string[], expected: string[]): Promise<string[]> {
  let left: string[] = [];
  for (let i = 0; i < 60; i++) {
    const now = await objectsIn(namespace);
    left = created.filter((n) => now.has(n)).sort();
    if (left.length <= expected.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return left;
}

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('kots remove --undeploy after install --app-slug (%s)', (label, bin) => {
  it('removes everything the install created but the documented exceptions', async () => {
    const { ns, before } = await settledNamespace(label === 'helm 4' ? 'kots-remove-h4' : 'kots-remove-h3');
    const r = await install('shop', ns, ['--chart', chart, '--app-slug', slug, '--helm-bin', bin]);
    expect(r.exitCode, r.stderr).toBe(0);

    const after = await objectsIn(ns);
    const created = [...after.keys()].filter((n) => !before.has(n));
    // What helm applied (the chart's objects) and helm's release record, each with the slug.
    const releaseRecord = 'secrets/sh.helm.release.v1.shop.v1';
    const applied = [
      'configmaps/shop-config',
      'secrets/shop-secret',
      'services/shop-web',
      'deployments/shop-web',
      'statefulsets/shop-db',
      releaseRecord,
    ];
    for (const name of applied) expect(after.get(name)?.annotations?.['kots.io/app-slug'], name).toBe(slug);
    // A chart annotation is kept beside ours.
    expect(after.get('secrets/shop-secret')?.annotations?.['example.com/owner']).toBe('team-a');
    // The hook Job: post-rendered (annotated) by helm 4 only.
    expect(after.get('jobs/shop-setup')?.annotations?.['kots.io/app-slug']).toBe(label === 'helm 4' ? slug : undefined);
    const setupPod = created.find((n) => n.startsWith('pods/shop-setup-'));
    expect(setupPod).toBeDefined();

    const deleted = await kotsClearNamespace(client, ns, slug, kubeconfig());
    expect(deleted).toEqual(expect.arrayContaining(applied));

    const exceptions = [
      'persistentvolumeclaims/data-shop-db-0',
      setupPod!,
      ...(label === 'helm 3' ? ['jobs/shop-setup'] : []),
    ].sort();
    expect(await leftOf(ns, created, exceptions)).toEqual(exceptions);
  });
});

describe('an install made before the slug was set (helm 4)', () => {
  it('is upgraded once by the next deploy with the slug, every record annotated, and then removed like the rest', async () => {
    const ns = await namespaceFor('kots-remove-late');
    const first = await install('shop', ns, ['--chart', chart]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect((await objectsIn(ns)).get('configmaps/shop-config')?.annotations?.['kots.io/app-slug']).toBeUndefined();
    // Same chart, same values: only the slug is new, and it is enough to upgrade.
    const second = await install('shop', ns, ['--chart', chart, '--app-slug', slug]);
    expect(second.exitCode, second.stderr).toBe(0);
    const after = await objectsIn(ns);
    for (const name of [
      'secrets/sh.helm.release.v1.shop.v1',
      'secrets/sh.helm.release.v1.shop.v2',
      'configmaps/shop-config',
      'statefulsets/shop-db',
    ]) {
      expect(after.get(name)?.annotations?.['kots.io/app-slug'], name).toBe(slug);
    }
    // A third deploy changes nothing (no-op) and the records keep the slug.
    const third = await install('shop', ns, ['--chart', chart, '--app-slug', slug]);
    expect(third.exitCode, third.stderr).toBe(0);
    expect((await objectsIn(ns)).has('secrets/sh.helm.release.v1.shop.v3')).toBe(false);
    const deleted = await kotsClearNamespace(client, ns, slug, kubeconfig());
    expect(deleted).toEqual(
      expect.arrayContaining(['secrets/sh.helm.release.v1.shop.v1', 'secrets/sh.helm.release.v1.shop.v2']),
    );
  });
});
