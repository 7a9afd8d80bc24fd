// The storage migration's writes against a fake API (the real one is in
// test/integration/crd-storage-migration.test.ts): every write dry-run first, nothing written when
// a dry run prunes a field (what the survey cannot see, as with a conversion webhook), each object
// written in the new storage version, storedVersions trimmed last; the survey's count and check.
import { describe, expect, it } from 'vitest';
import type { Obj, ObjectClient } from '../../src/cluster/object-client.js';
import { migrateStorage, prunedRefusal, surveyMigration } from '../../src/crds/migrate-storage.js';
import { widgetCrd } from '../fixtures/upgrade-paths/widget-charts.js';

const group = 'unit.example.com';
const m = { storage: 'v1', from: 'v1alpha1', drop: ['v1alpha1'], keep: ['v1'] };
const items = [
  { metadata: { name: 'a', namespace: 'x', resourceVersion: '1' }, spec: { size: 's', color: 'red' } },
  { metadata: { name: 'b', namespace: 'y', resourceVersion: '2' }, spec: { size: 'm', color: 'blue' } },
];

function fakeClient(prune: (o: Obj) => Obj): { client: ObjectClient; calls: string[] } {
  const calls: string[] = [];
  const no = () => Promise.reject(new Error('not used'));
  const client: ObjectClient = {
    get: no,
    delete: no,
    apply: no,
    jsonPatch: no,
    createDryRun: no,
    list: async (path) => {
      calls.push(`list ${path}`);
      return { items: structuredClone(items), metadata: {} };
    },
    update: async (path, body, manager, dryRun) => {
      calls.push(`${dryRun ? 'dry-run ' : ''}update ${path} ${String(body.apiVersion)} ${manager}`);
      return prune(structuredClone(body));
    },
    mergePatch: async (path, patch) => {
      calls.push(`merge ${path} ${JSON.stringify(patch)}`);
      return {};
    },
  };
  return { client, calls };
}

const crd = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size', 'color'] }]);
const path = (ns: string, name: string) => `/apis/${group}/v1/namespaces/${ns}/widgets/${name}`;

describe('migrateStorage', () => {
  it('dry-runs every write, then writes each in the new storage version, then trims storedVersions', async () => {
    const { client, calls } = fakeClient((o) => o);
    expect(await migrateStorage(client, crd, m)).toEqual({ objects: 2 });
    expect(calls).toEqual([
      `list /apis/${group}/v1/widgets`,
      `dry-run update ${path('x', 'a')} ${group}/v1 helm-installer`,
      `dry-run update ${path('y', 'b')} ${group}/v1 helm-installer`,
      `update ${path('x', 'a')} ${group}/v1 helm-installer`,
      `update ${path('y', 'b')} ${group}/v1 helm-installer`,
      `merge /apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}/status {"status":{"storedVersions":["v1"]}}`,
    ]);
  });

  it('a dry run that prunes a field: nothing written, the objects and fields returned', async () => {
    const { client, calls } = fakeClient((o) =>
      (o.metadata as { name: string }).name === 'b' ? { ...o, spec: { size: 'm' } } : o,
    );
    expect(await migrateStorage(client, crd, m)).toEqual({ pruned: [{ object: 'y/b', fields: ['spec.color'] }] });
    expect(calls.filter((c) => !c.startsWith('dry-run') && !c.startsWith('list'))).toEqual([]);
  });
});

describe('surveyMigration', () => {
  it('counts the objects, read in a version the live CRD serves, and names the fields the new schema lacks', async () => {
    const live = widgetCrd(group, [{ name: 'v1alpha1', storage: true, fields: ['size', 'color'] }]);
    const desired = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size'] }]);
    const { client, calls } = fakeClient((o) => o);
    const survey = await surveyMigration(client, live, desired, m);
    expect(survey).toEqual({
      objects: 2,
      pruned: [
        { object: 'x/a', fields: ['spec.color'] },
        { object: 'y/b', fields: ['spec.color'] },
      ],
    });
    expect(calls).toEqual([`list /apis/${group}/v1alpha1/widgets`]);
    expect(prunedRefusal({ name: `widgets.${group}`, source: 'op/crds/w.yaml' }, m, survey.pruned, 'shop')).toBe(
      `CRD widgets.${group} (op/crds/w.yaml): the new chart drops version v1alpha1, in which objects are still stored, and its storage version v1 has no place for fields these objects hold: ` +
        'x/a (spec.color), y/b (spec.color); rewriting them in v1 would lose those fields. The vendor must ship a chart version whose CRD keeps them in v1 (or still serves v1alpha1), and this one after it. Release shop was left as it was.',
    );
  });
});
