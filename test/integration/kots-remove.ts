// KOTS's own removal rule, reproduced for tests from kots pkg/operator/client/delete.go
// (clearNamespaces, read 2026-11 at replicatedhq/kots 370ae90): discovery's preferred namespaced
// resources (ServerPreferredNamespacedResources: one version per group, no subresources, no
// verb filter) less KOTS's skip list; every object of each listed in the namespace; those whose
// `kots.io/app-slug` annotation equals the slug deleted with empty DeleteOptions (the server's
// default propagation: a batch/v1 Job orphans its pods), objects already being deleted skipped;
// again every 2 s until none is left, at most 61 rounds. A list that fails is skipped, as KOTS does.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ObjectClient } from '../../src/cluster/object-client.js';
import { kubectl } from '../cluster/kube.js';

const SKIP = new Set([
  '/v1/bindings',
  '/v1/events',
  'extensions/v1beta1/replicationcontrollers',
  'apps/v1/controllerrevisions',
  'authentication.k8s.io/v1/tokenreviews',
  'authorization.k8s.io/v1/localsubjectaccessreviews',
  'authorization.k8s.io/v1/subjectaccessreviews',
  'authorization.k8s.io/v1/selfsubjectaccessreviews',
  'authorization.k8s.io/v1/selfsubjectrulesreviews',
]);

export interface Resource {
  group: string;
  version: string;
  resource: string;
}

interface ResourceList {
  resources: { name: string; namespaced: boolean }[];
}

export interface Item {
  metadata: {
    name: string;
    namespace?: string;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    ownerReferences?: { kind: string }[];
  };
}

/** ServerPreferredNamespacedResources, as client-go computes it. */
export async function preferredNamespacedResources(client: ObjectClient): Promise<Resource[]> {
  const out: Resource[] = [];
  const add = (group: string, version: string, list: ResourceList) => {
    for (const r of list.resources)
      if (r.namespaced && !r.name.includes('/')) out.push({ group, version, resource: r.name });
  };
  add('', 'v1', (await client.get('/api/v1')) as unknown as ResourceList);
  const groups = (await client.get('/apis')) as unknown as {
    groups: { name: string; preferredVersion: { version: string } }[];
  };
  for (const g of groups.groups) {
    const list = await client.get(`/apis/${g.name}/${g.preferredVersion.version}`).catch(() => undefined);
    if (list) add(g.name, g.preferredVersion.version, list as unknown as ResourceList);
  }
  return out;
}

function collectionPath(r: Resource, namespace: string): string {
  return `${r.group === '' ? '/api' : `/apis/${r.group}`}/${r.version}/namespaces/${namespace}/${r.resource}`;
}

/** Every object of the namespace, by resource (failed lists left out, as KOTS leaves them). */
export async function listAll(
  client: ObjectClient,
  resources: Resource[],
  namespace: string,
): Promise<{ r: Resource; item: Item }[]> {
  const lists = await Promise.all(
    resources.map(async (r) => ({
      r,
      list: await client.list(collectionPath(r, namespace), {}).catch(() => undefined),
    })),
  );
  return lists.flatMap(({ r, list }) => ((list?.items as Item[] | undefined) ?? []).map((item) => ({ r, item })));
}

/** KOTS's clearNamespaces for one namespace and slug; the objects it deleted, as `resource/name`. */
export async function kotsClearNamespace(
  client: ObjectClient,
  namespace: string,
  slug: string,
  kubeconfig: string,
): Promise<string[]> {
  const resources = (await preferredNamespacedResources(client)).filter(
    (r) => !SKIP.has(`${r.group}/${r.version}/${r.resource}`),
  );
  const deleted = new Set<string>();
  for (let round = 60; round >= 0; round--) {
    const matching = (await listAll(client, resources, namespace)).filter(
      ({ item }) => item.metadata.annotations?.['kots.io/app-slug'] === slug,
    );
    if (matching.length === 0) return [...deleted].sort();
    for (const { r, item } of matching) {
      if (item.metadata.deletionTimestamp) continue;
      // `kubectl delete --raw` sends a DELETE without a body: the server's defaults, as KOTS's empty DeleteOptions.
      await kubectl(['delete', '--raw', `${collectionPath(r, namespace)}/${item.metadata.name}`], {
        kubeconfig,
        reject: false,
      });
      deleted.add(`${r.resource}/${item.metadata.name}`);
    }
    await sleep(2000);
  }
  throw new Error(`failed to clear all resources for app ${slug}`);
}
