// Fields that cannot change (issue 29, item 3), on the real control plane: a chart's next version
// changes its StatefulSet's serviceName or selector, or its Deployment's selector. The installer
// recreates exactly those objects before helm upgrades (a StatefulSet whose selector stays is
// orphaned, its pods adopted; otherwise its pods go), and the PVC is the same object, still
// Bound, afterwards. With --recreate-immutable never the run fails before helm, naming the object,
// the field and both ways out. Helm 4 and helm 3, and a release plain helm 3 made.
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm3, repoRoot, runCli } from '../helpers.js';
import { history, install, installerEvents, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole, type Rule } from './service-account.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'immutable');
const newNamespace = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();
const get = (ns: string, ...what: string[]) => getJson(['get', ...what], { kubeconfig: kubeconfig(), namespace: ns });

/** The chart's objects as the tests compare them: uids, the immutable fields, the claim's binding. */
async function observed(ns: string) {
  const db = await get(ns, 'statefulset', 'db');
  const web = await get(ns, 'deployment', 'web');
  const pvc = await get(ns, 'pvc', 'data-db-0');
  const pod = await get(ns, 'pod', 'db-0');
  return {
    pod: pod.metadata.uid as string,
    db: {
      uid: db.metadata.uid as string,
      serviceName: db.spec.serviceName as string,
      selector: db.spec.selector.matchLabels as Record<string, string>,
    },
    web: { uid: web.metadata.uid as string, selector: web.spec.selector.matchLabels as Record<string, string> },
    pvc: { uid: pvc.metadata.uid as string, phase: pvc.status.phase as string, volume: pvc.spec.volumeName as string },
  };
}

const installer = (ns: string, sets: readonly string[], extra: string[] = []) =>
  install('db', ns, ['--chart', chart, ...sets.flatMap((s) => ['--set', s]), ...extra]);

const cases = [
  {
    name: 'a StatefulSet serviceName change: the StatefulSet orphaned and recreated, its pod adopted',
    sets: ['serviceName=db-v2'],
    samePod: true,
    recreated: [['StatefulSet', 'db', 'spec.serviceName']],
    commands: ['kubectl delete statefulset db -n NS --cascade=orphan'],
    expected: { serviceName: 'db-v2', dbSelector: { app: 'db' }, webSelector: { app: 'web' } },
  },
  {
    name: 'a StatefulSet selector and a Deployment selector change: both recreated, the old pods gone',
    sets: ['dbSelector.tier=data', 'webSelector.track=stable'],
    samePod: false,
    recreated: [
      ['Deployment', 'web', 'spec.selector'],
      ['StatefulSet', 'db', 'spec.selector'],
    ],
    commands: [
      'kubectl delete deployment web -n NS --cascade=background',
      'kubectl delete statefulset db -n NS --cascade=foreground',
    ],
    expected: {
      serviceName: 'db-headless',
      dbSelector: { app: 'db', tier: 'data' },
      webSelector: { app: 'web', track: 'stable' },
    },
  },
  {
    name: 'a volumeClaimTemplates change and a new version: the StatefulSet orphaned, its pod adopted then rolled',
    sets: ['storage=2Gi', 'version=v2'],
    samePod: false,
    recreated: [['StatefulSet', 'db', 'spec.volumeClaimTemplates']],
    commands: ['kubectl delete statefulset db -n NS --cascade=orphan'],
    expected: { serviceName: 'db-headless', dbSelector: { app: 'db' }, webSelector: { app: 'web' } },
  },
] as const;

describe.concurrent('install recreates objects whose fields cannot change', () => {
  for (const helm of ['helm4', 'helm3'] as const) {
    for (const c of cases) {
      it(`${helm}: ${c.name}; the PVC is the same and Bound; never fails first, naming the way out`, async () => {
        const ns = await newNamespace(`immutable-${helm}`);
        const bin = helm === 'helm3' ? ['--helm-bin', helm3] : [];
        const first = await installer(ns, [], bin);
        expect(first.exitCode, first.stderr).toBe(0);
        const before = await observed(ns);
        expect(before.pvc.phase).toBe('Bound');

        // plan names each object install would recreate, and why.
        const plan = await runCli(
          [
            'plan',
            '--release',
            'db',
            '--namespace',
            ns,
            '--chart',
            chart,
            ...c.sets.flatMap((x) => ['--set', x]),
            ...bin,
            '-o',
            'json',
          ],
          { env: { KUBECONFIG: kubeconfig() } },
        );
        expect(plan.exitCode, plan.stderr).toBe(10);
        const planned = (
          JSON.parse(plan.stdout) as {
            objects: { kind: string; name: string; recreate?: { fields: string[]; how: string } }[];
          }
        ).objects.filter((o) => o.recreate);
        expect(planned.map((o) => [o.kind, o.name, o.recreate!.fields.join(', ')])).toEqual(c.recreated);

        // never: refused before helm runs; nothing changed, no new revision.
        const refused = await installer(ns, c.sets, [...bin, '--recreate-immutable', 'never']);
        expect(refused.exitCode, refused.stderr).toBe(4);
        for (const [kind, name, field] of c.recreated)
          expect(refused.stderr).toMatch(
            new RegExp(`^  ${kind} ${name} in namespace ${ns}: ${field.replace('.', '\\.')}`, 'm'),
          );
        expect(refused.stderr).toContain('--recreate-immutable auto');
        for (const command of c.commands)
          expect(refused.stderr).toContain(`    by hand: ${command.replaceAll('NS', ns)}\n`);
        expect((await history('db', ns)).map((r) => r.status)).toEqual(['deployed']);
        expect(await observed(ns)).toEqual(before);

        const upgraded = await installer(ns, c.sets, bin);
        expect(upgraded.exitCode, upgraded.stderr).toBe(0);
        expect(upgraded.stderr).toContain('recreated, as fields that cannot change changed:');
        for (const [kind, name, field] of c.recreated)
          expect(upgraded.stderr).toContain(`${kind}/${ns}/${name}: ${field}`);
        const after = await observed(ns);
        expect(after.db.uid).not.toBe(before.db.uid);
        // Orphaned and adopted: the same pod; otherwise (selector, new version) a new one.
        expect(after.pod === before.pod).toBe(c.samePod);
        expect(after.db.serviceName).toBe(c.expected.serviceName);
        expect(after.db.selector).toEqual(c.expected.dbSelector);
        expect(after.web.selector).toEqual(c.expected.webSelector);
        expect(after.web.uid === before.web.uid).toBe(c.recreated.every(([kind]) => kind !== 'Deployment'));
        // The data stays: the same claim object, bound to the same volume.
        expect(after.pvc).toEqual(before.pvc);
        expect((await history('db', ns)).map((r) => r.status)).toEqual(['superseded', 'deployed']);
        // The new pod is the new StatefulSet's.
        const pod = await get(ns, 'pod', 'db-0');
        expect(pod.metadata.ownerReferences.map((o: { uid: string }) => o.uid)).toEqual([after.db.uid]);
        for (const [k, v] of Object.entries(c.expected.dbSelector)) expect(pod.metadata.labels[k]).toBe(v);
        const upgradedEvent = (await installerEvents(ns)).find((e) => e.reason === 'Upgraded');
        expect(upgradedEvent?.note).toContain(
          `recreated (fields that cannot change): ${c.recreated.map(([kind, name]) => `${kind}/${ns}/${name}`).join(', ')}`,
        );

        // The next run with the same input changes nothing.
        const again = await installer(ns, c.sets, bin);
        expect(again.exitCode, again.stderr).toBe(0);
        expect(again.stderr).not.toContain('recreated');
        expect((await observed(ns)).db.uid).toBe(after.db.uid);
      });
    }
  }

  it('a release plain helm 3 made, then the installer (helm 4): serviceName changed, recreated, the PVC kept', async () => {
    const ns = await newNamespace('immutable-from-helm3');
    const made = await execa(
      helm3,
      ['upgrade', '--install', 'db', chart, '--namespace', ns, '--wait', '--timeout', '120s'],
      { env: { KUBECONFIG: kubeconfig() }, reject: false },
    );
    expect(made.exitCode, made.stderr).toBe(0);
    const before = await observed(ns);
    const upgraded = await installer(ns, ['serviceName=db-v2']);
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expect(upgraded.stderr).toContain(`StatefulSet/${ns}/db: spec.serviceName`);
    const after = await observed(ns);
    expect(after.db.serviceName).toBe('db-v2');
    expect(after.db.uid).not.toBe(before.db.uid);
    expect(after.pvc).toEqual(before.pvc);
    expect(after.web.uid).toBe(before.web.uid);
    expect(after.pod).toBe(before.pod);
  });

  it('a run killed after its delete (the StatefulSet gone, helm not run): the next run finishes, the pod adopted, the PVC kept', async () => {
    const ns = await newNamespace('immutable-resume');
    expect((await installer(ns, [])).exitCode).toBe(0);
    const before = await observed(ns);
    await kubectl(['delete', 'statefulset', 'db', '--cascade=orphan', '--wait=true'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
    });
    const next = await installer(ns, ['serviceName=db-v2']);
    expect(next.exitCode, next.stderr).toBe(0);
    // Nothing left to recreate: helm creates the missing StatefulSet.
    expect(next.stderr).not.toContain('recreated');
    const after = await observed(ns);
    expect(after.db.serviceName).toBe('db-v2');
    expect(after.pvc).toEqual(before.pvc);
    expect(after.pod).toBe(before.pod);
  });

  it('an identity that may not delete StatefulSets: exit 6 naming kind and verb before anything changes', async () => {
    const ns = await newNamespace('immutable-rbac');
    expect((await installer(ns, [])).exitCode).toBe(0);
    const before = await observed(ns);
    const noStatefulSetDelete: Rule[] = [
      ...shippedRole.rules.map((r) => ({ ...r, resources: r.resources.filter((x) => x !== 'statefulsets') })),
      { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'create', 'patch'] },
    ];
    const kc = await identity(ns, noStatefulSetDelete);
    const r = await install('db', ns, ['--chart', chart, '--set', 'serviceName=db-v2'], { KUBECONFIG: kc });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toContain(`  statefulsets.apps in namespace ${ns}: delete (StatefulSet/db)\n`);
    expect(await observed(ns)).toEqual(before);
    expect((await history('db', ns)).map((x) => x.status)).toEqual(['deployed']);
  });

  for (const helm of ['helm4', 'helm3'] as const) {
    it(`${helm}: a Job's template and a Service made headless: both recreated, the StatefulSet left as it is`, async () => {
      const ns = await newNamespace(`immutable-job-${helm}`);
      const bin = helm === 'helm3' ? ['--helm-bin', helm3] : [];
      expect((await installer(ns, ['job.enabled=true', 'headless=false'], bin)).exitCode).toBe(0);
      const [job, svc, db] = [
        await get(ns, 'job', 'migrate'),
        await get(ns, 'service', 'db-headless'),
        await get(ns, 'statefulset', 'db'),
      ];
      expect(svc.spec.clusterIP).not.toBe('None');
      const upgraded = await installer(
        ns,
        ['job.enabled=true', 'job.image=example.invalid/migrate:2', 'headless=true'],
        bin,
      );
      expect(upgraded.exitCode, upgraded.stderr).toBe(0);
      expect(upgraded.stderr).toContain(
        `  Service/${ns}/db-headless: spec.clusterIP\n  Job/${ns}/migrate: spec.template`,
      );
      const [job2, svc2, db2] = [
        await get(ns, 'job', 'migrate'),
        await get(ns, 'service', 'db-headless'),
        await get(ns, 'statefulset', 'db'),
      ];
      expect(job2.metadata.uid).not.toBe(job.metadata.uid);
      expect(job2.spec.template.spec.containers[0].image).toBe('example.invalid/migrate:2');
      expect([svc2.metadata.uid === svc.metadata.uid, svc2.spec.clusterIP]).toEqual([false, 'None']);
      expect(db2.metadata.uid).toBe(db.metadata.uid);
    });
  }
});
