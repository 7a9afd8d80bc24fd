// How many requests a plan makes to read the live objects (src/drift/read-live.ts): one list per
// kind and namespace (its pages followed), a get per object only where list is forbidden, and a
// kind neither allowed refused naming kind and verb. The client here is a recording stand-in for
// the API server; test/integration/plan.test.ts reads a real one.
import { describe, expect, it } from 'vitest';
import type { KubeClients } from '../../src/cluster/kube-client.js';
import type { PlacedObject } from '../../src/drift/manifest-objects.js';
import { ObjectApiError, type Obj, type ObjectClient } from '../../src/cluster/object-client.js';
import { readLive } from '../../src/drift/read-live.js';

const kube = { server: 'https://cluster.test' } as unknown as KubeClients;

function placed(apiVersion: string, kind: string, resource: string, namespace: string, name: string): PlacedObject {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return { apiVersion, kind, name, namespace, body: {}, path: `${base}/namespaces/${namespace}/${resource}/${name}` };
}

const item = (name: string, namespace: string): Obj => ({ metadata: { name, namespace, resourceVersion: '1' } });

/** Answers from `pages` (collection -> pages of items) or `objects` (path -> object); records every call. */
function recorder(o: {
  pages?: Record<string, Obj[][]>;
  forbidList?: string[];
  objects?: Record<string, Obj>;
  forbidGet?: boolean;
}) {
  const calls: string[] = [];
  const client: ObjectClient = {
    async list(path, query) {
      calls.push(`list ${path}${query.continue ? ` continue=${query.continue}` : ''}`);
      if (o.forbidList?.includes(path))
        throw new ObjectApiError(403, '{"kind":"Status","code":403,"message":"forbidden"}');
      const pages = o.pages?.[path] ?? [[]];
      const at = query.continue ? Number(query.continue) : 0;
      return { items: pages[at], metadata: at + 1 < pages.length ? { continue: String(at + 1) } : {} };
    },
    async get(path) {
      calls.push(`get ${path}`);
      if (o.forbidGet) throw new ObjectApiError(403, '{"kind":"Status","code":403,"message":"forbidden"}');
      return o.objects?.[path];
    },
    delete: () => Promise.reject(new Error('not used')),
    apply: () => Promise.reject(new Error('not used')),
    createDryRun: () => Promise.reject(new Error('not used')),
    jsonPatch: () => Promise.reject(new Error('not used')),
    mergePatch: () => Promise.reject(new Error('not used')),
    update: () => Promise.reject(new Error('not used')),
  };
  return { client, calls };
}

describe('readLive', () => {
  it('lists each kind once per namespace, follows pages, and keeps only the release objects', async () => {
    const objects = [
      placed('apps/v1', 'Deployment', 'deployments', 'shop', 'web'),
      placed('apps/v1', 'Deployment', 'deployments', 'shop', 'worker'),
      placed('v1', 'ConfigMap', 'configmaps', 'shop', 'settings'),
      placed('v1', 'ConfigMap', 'configmaps', 'edge', 'remote'),
    ];
    const { client, calls } = recorder({
      pages: {
        '/apis/apps/v1/namespaces/shop/deployments': [
          [item('web', 'shop'), item('unrelated', 'shop')],
          [item('worker', 'shop')],
        ],
        '/api/v1/namespaces/shop/configmaps': [[item('settings', 'shop'), item('kube-root-ca.crt', 'shop')]],
        '/api/v1/namespaces/edge/configmaps': [[]],
      },
    });
    const live = await readLive(kube, client, objects);
    expect(calls.sort()).toEqual([
      'list /api/v1/namespaces/edge/configmaps',
      'list /api/v1/namespaces/shop/configmaps',
      'list /apis/apps/v1/namespaces/shop/deployments',
      'list /apis/apps/v1/namespaces/shop/deployments continue=1',
    ]);
    expect([...live.keys()].sort()).toEqual([
      '/ConfigMap/shop/settings',
      'apps/Deployment/shop/web',
      'apps/Deployment/shop/worker',
    ]);
    // A List's items carry no kind: each is given its list's.
    expect(live.get('apps/Deployment/shop/web')).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'shop', resourceVersion: '1' },
    });
  });

  it('reads object by object where list is forbidden, and names kind and verb where get is too', async () => {
    const secrets = [
      placed('v1', 'Secret', 'secrets', 'shop', 'creds'),
      placed('v1', 'Secret', 'secrets', 'shop', 'tls'),
    ];
    const collection = '/api/v1/namespaces/shop/secrets';
    const allowed = recorder({
      forbidList: [collection],
      objects: { [`${collection}/creds`]: { ...item('creds', 'shop'), kind: 'Secret', apiVersion: 'v1' } },
    });
    const live = await readLive(kube, allowed.client, secrets);
    expect(allowed.calls).toEqual([`list ${collection}`, `get ${collection}/creds`, `get ${collection}/tls`]);
    expect([...live.keys()]).toEqual(['/Secret/shop/creds']);

    const refused = recorder({ forbidList: [collection], forbidGet: true });
    await expect(readLive(kube, refused.client, secrets)).rejects.toMatchObject({
      exitCode: 6,
      message:
        'plan: get Secret creds in namespace shop is not allowed: the installer may not get Secret (API group core) in namespace shop',
    });
  });
});
