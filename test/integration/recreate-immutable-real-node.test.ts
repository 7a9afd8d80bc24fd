// Data kept across a recreate, where a kubelet really runs the pod (DESIGN.md 6b): the fixture's
// StatefulSet on the real node, its container a static program that writes a file into its PVC on
// first start and prints what it finds there on every start. Its selector changes (the pod is
// deleted with the old StatefulSet, a new pod made by the new one), or its serviceName with a new
// version (the pod orphaned, adopted, then replaced): the new pod reads the file the first one
// wrote, from the same claim.
import { describe, expect, inject, it } from 'vitest';
import { getJson } from '../cluster/kube.js';
import { REAL_NODE_NAME } from '../cluster/real-node.js';
import { install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { markerDatabase, markerLog as logsOf } from './pvc-marker.js';

const registry = inject('registry');
const newNamespace = namespacesDeletedAfterAll();

const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

const cases = [
  {
    name: 'a StatefulSet selector change: the pod goes with it',
    sets: ['dbSelector.tier=data'],
    field: 'spec.selector',
    labels: { tier: 'data' },
  },
  {
    name: 'a serviceName change and a new version: the pod orphaned, adopted, then rolled',
    sets: ['serviceName=db-v2', 'version=v2'],
    field: 'spec.serviceName',
    labels: { app: 'db' },
  },
];

describe.concurrent('recreate on the real node', () => {
  for (const c of cases)
    it(`${c.name}; the new pod reads the file the old one wrote into the same PVC`, async () => {
      const ns = await newNamespace('immutable-real');
      const { token, base } = await markerDatabase(registry);
      const first = await install('db', ns, base);
      expect(first.exitCode, first.stderr).toBe(0);
      const pod1 = await getJson(['get', 'pod', 'db-0'], opts(ns));
      expect(pod1.spec.nodeName).toBe(REAL_NODE_NAME);
      expect(await logsOf(ns, 'db-0', /wrote: /)).toBe(`wrote: written-by-v1-${token}\n`);
      const pvc = await getJson(['get', 'pvc', 'data-db-0'], opts(ns));

      const upgraded = await install('db', ns, [...base, ...c.sets.flatMap((x) => ['--set', x])]);
      expect(upgraded.exitCode, upgraded.stderr).toBe(0);
      expect(upgraded.stderr).toContain(`StatefulSet/${ns}/db: ${c.field}`);
      const pod2 = await getJson(['get', 'pod', 'db-0'], opts(ns));
      expect(pod2.metadata.uid).not.toBe(pod1.metadata.uid);
      expect(pod2.metadata.labels).toMatchObject(c.labels);
      expect(await logsOf(ns, 'db-0', /found: /)).toBe(`found: written-by-v1-${token}\n`);
      const after = await getJson(['get', 'pvc', 'data-db-0'], opts(ns));
      expect([after.metadata.uid, after.status.phase, after.spec.volumeName]).toEqual([
        pvc.metadata.uid,
        'Bound',
        pvc.spec.volumeName,
      ]);
    });
});
