// A chart version whose CRDs drop the version their objects are stored in (a public operator's
// upgrade across several minors), on the real API server through the built CLI, helm 4 and 3:
// the installer moves the objects itself, through an intermediate CRD serving both versions,
// and a SIGKILL at any point of it is finished by the next run. Everything checked is read from
// the cluster: each object at the new version with its fields, the CRDs' versions, stored
// versions and uids; expected values are written out.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm3, helm4, runCli, tempDir } from '../helpers.js';
import { plural, type StorageKind, writeStorageChart } from '../fixtures/upgrade-paths/storage-charts.js';
import { history, install, killMidRun, kubeconfig, namespacesDeletedAfterAll, spawnCli } from './cluster-helpers.js';

const newNamespace = namespacesDeletedAfterAll();
const groups: string[] = [];
const KINDS = ['Widget', 'Gadget', 'Sprocket'];
afterAll(async () => {
  const crds = groups.flatMap((g) => KINDS.map((k) => `${plural(k)}.${g}`));
  if (crds.length > 0)
    await kubectl(['delete', 'crd', ...crds, '--ignore-not-found', '--wait=false'], { kubeconfig: kubeconfig() });
});

const HELMS = [
  ['helm4', helm4],
  ['helm3', helm3],
] as const;
const opts = () => ({ kubeconfig: kubeconfig() });

/** Widgets and Gadgets with objects, Sprockets with none; `v1Fields` are what the new chart's v1 declares for Gadget. */
function charts(dir: string, group: string, gadgetV1Fields = ['size', 'color']): { old: string; next: string } {
  const alpha = (kind: string, main: boolean): StorageKind => ({
    kind,
    versions: [{ name: 'v1alpha1', storage: true, fields: ['size', 'color'] }],
    ...(main ? { main: { version: 'v1alpha1', spec: { size: 's', color: 'red' } } } : {}),
  });
  const v1 = (kind: string, fields: string[], main: boolean): StorageKind => ({
    kind,
    versions: [{ name: 'v1', storage: true, fields }],
    ...(main
      ? { main: { version: 'v1', spec: Object.fromEntries(fields.map((f) => [f, f === 'size' ? 'l' : 'blue'])) } }
      : {}),
  });
  return {
    old: writeStorageChart(join(dir, 'old'), '1.0.0', group, [
      alpha('Widget', true),
      alpha('Gadget', true),
      alpha('Sprocket', false),
    ]),
    next: writeStorageChart(join(dir, 'next'), '2.0.0', group, [
      v1('Widget', ['size', 'color'], true),
      v1('Gadget', gadgetV1Fields, true),
      v1('Sprocket', ['size'], false),
    ]),
  };
}

async function setup(prefix: string): Promise<{ ns: string; ns2: string; group: string; dir: string }> {
  const ns = await newNamespace(prefix);
  const ns2 = await newNamespace(`${prefix}-b`);
  const group = `${ns}.test.helm-installer.io`;
  groups.push(group);
  return { ns, ns2, group, dir: tempDir('hi-storage') };
}

const run = (ns: string, chartDir: string, bin: string) =>
  install('operator', ns, ['--chart', chartDir, '--helm-bin', bin], { HELM_INSTALLER_LOCK_TIMEOUT: '90s' });

/** `count` objects of each of Widget and Gadget in each namespace, stored in v1alpha1. */
async function createObjects(group: string, namespaces: string[], count: number): Promise<void> {
  const items = namespaces.flatMap((namespace) =>
    ['Widget', 'Gadget'].flatMap((kind) =>
      Array.from({ length: count }, (_, i) => ({
        apiVersion: `${group}/v1alpha1`,
        kind,
        metadata: { name: `extra-${i}`, namespace },
        spec: { size: String(i), color: `c${i}` },
      })),
    ),
  );
  await kubectl(['create', '-f', '-'], {
    ...opts(),
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
    timeoutMs: 300_000,
  });
}

interface LiveCrd {
  uid: string;
  resourceVersion: string;
  versions: { name: string; served: boolean; storage: boolean }[];
  stored: string[];
}

async function crd(group: string, kind: string): Promise<LiveCrd> {
  const live = await getJson(['get', 'crd', `${plural(kind)}.${group}`], opts());
  return {
    uid: live.metadata.uid,
    resourceVersion: live.metadata.resourceVersion,
    versions: live.spec.versions.map((v: any) => ({ name: v.name, served: v.served, storage: v.storage })),
    stored: live.status.storedVersions,
  };
}

const uids = async (group: string) => Promise.all(KINDS.map(async (k) => (await crd(group, k)).uid));

/** Every object of the kind, read at v1: `ns/name` -> spec. */
async function specsAtV1(group: string, kind: string): Promise<Record<string, unknown>> {
  const list = await getJson(['get', `${plural(kind)}.v1.${group}`, '--all-namespaces'], opts());
  return Object.fromEntries(list.items.map((o: any) => [`${o.metadata.namespace}/${o.metadata.name}`, o.spec]));
}

/** What every object must read back as after the upgrade: the chart's `main` as the new chart has it, the others as created. */
function expectedSpecs(ns: string, ns2: string, count: number, main: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { [`${ns}/main`]: main };
  for (const n of [ns, ns2])
    for (let i = 0; i < count; i++) out[`${n}/extra-${i}`] = { size: String(i), color: `c${i}` };
  return out;
}

/** The end state of every successful path: only v1, stored only in v1, same uids, every object at v1 with its fields. */
async function expectMigrated(
  s: { ns: string; ns2: string; group: string },
  count: number,
  before: string[],
): Promise<void> {
  for (const kind of KINDS)
    expect(await crd(s.group, kind)).toMatchObject({
      versions: [{ name: 'v1', served: true, storage: true }],
      stored: ['v1'],
    });
  expect(await uids(s.group)).toEqual(before);
  const main = { size: 'l', color: 'blue' };
  expect(await specsAtV1(s.group, 'Widget')).toEqual(expectedSpecs(s.ns, s.ns2, count, main));
  expect(await specsAtV1(s.group, 'Gadget')).toEqual(expectedSpecs(s.ns, s.ns2, count, main));
  expect(await specsAtV1(s.group, 'Sprocket')).toEqual({});
}

describe('a CRD that drops the version its objects are stored in', { timeout: 600_000 }, () => {
  for (const [name, bin] of HELMS) {
    it(`${name}: migrated through an intermediate CRD, objects in two namespaces at v1 with their fields, storedVersions trimmed, uids kept; plan shows the counts`, async () => {
      const s = await setup(`stor-${name}`);
      const { old, next } = charts(s.dir, s.group);
      expect((await run(s.ns, old, bin)).exitCode).toBe(0);
      await createObjects(s.group, [s.ns, s.ns2], 2);
      const before = await uids(s.group);

      const planned = await runCli(
        ['plan', '--release', 'operator', '--namespace', s.ns, '--chart', next, '--helm-bin', bin],
        { env: { KUBECONFIG: kubeconfig() } },
      );
      expect(planned.exitCode, planned.stderr).toBe(10);
      const change = 'versions +v1 -v1alpha1; storage v1alpha1 -> v1';
      expect(planned.stdout).toContain(
        `update CRD widgets.${s.group} (crds/): ${change}: 5 objects rewritten in v1 first (through a CRD serving v1alpha1 and v1), then v1alpha1 dropped from its stored versions\n`,
      );
      expect(planned.stdout).toContain(
        `update CRD gadgets.${s.group} (crds/): ${change}: 5 objects rewritten in v1 first (through a CRD serving v1alpha1 and v1), then v1alpha1 dropped from its stored versions\n`,
      );
      expect(planned.stdout).toContain(
        `update CRD sprockets.${s.group} (crds/): ${change}: no object stored: v1alpha1 dropped from its stored versions\n`,
      );

      const upgraded = await run(s.ns, next, bin);
      expect(upgraded.exitCode, upgraded.stdout + upgraded.stderr).toBe(0);
      expect(upgraded.stdout).toContain(
        `CRD widgets.${s.group}: 5 objects stored in v1; v1alpha1 dropped from its stored versions`,
      );
      expect(upgraded.stdout).toContain(
        `CRD sprockets.${s.group}: 0 objects stored in v1; v1alpha1 dropped from its stored versions`,
      );
      await expectMigrated(s, 2, before);
      expect((await history('operator', s.ns, bin)).map((r) => r.status)).toEqual(['superseded', 'deployed']);
    });
  }

  it('helm4: a field the new storage version would prune is refused, exit 3, before any change, naming the objects and the field', async () => {
    const s = await setup('stor-pruned');
    const { old, next } = charts(s.dir, s.group, ['size']);
    expect((await run(s.ns, old, helm4)).exitCode).toBe(0);
    await createObjects(s.group, [s.ns, s.ns2], 1);
    const before = await Promise.all(KINDS.map((k) => crd(s.group, k)));
    const refusal = `CRD gadgets.${s.group} (operator/crds/gadgets.yaml): the new chart drops version v1alpha1, in which objects are still stored, and its storage version v1 has no place for fields these objects hold: `;

    const planned = await runCli(['plan', '--release', 'operator', '--namespace', s.ns, '--chart', next], {
      env: { KUBECONFIG: kubeconfig() },
    });
    expect(planned.exitCode, planned.stderr).toBe(3);
    expect(planned.stderr).toContain(refusal);
    const refused = await run(s.ns, next, helm4);
    expect(refused.exitCode, refused.stdout + refused.stderr).toBe(3);
    expect(refused.stderr).toContain(refusal);
    // The summary clips its cause line; the log has the whole message.
    for (const o of [`${s.ns}/extra-0 (spec.color)`, `${s.ns2}/extra-0 (spec.color)`, `${s.ns}/main (spec.color)`])
      expect(refused.stdout).toContain(o);
    expect(refused.stdout).toContain('rewriting them in v1 would lose those fields');
    expect(refused.stdout + refused.stderr).not.toContain(`CRD widgets.${s.group} (`);
    // Nothing changed: the CRDs as they were (same resourceVersion), the objects with their fields, the release.
    expect(await Promise.all(KINDS.map((k) => crd(s.group, k)))).toEqual(before);
    const gadget = await getJson(['get', `gadgets.v1alpha1.${s.group}`, 'extra-0'], { ...opts(), namespace: s.ns2 });
    expect(gadget.spec).toEqual({ size: '0', color: 'c0' });
    expect((await history('operator', s.ns)).map((r) => r.status)).toEqual(['deployed']);
  });
});

describe('a storage migration killed (SIGKILL) at each point: the next run finishes it', { timeout: 600_000 }, () => {
  const COUNT = 250;

  /** The old chart with COUNT objects of each kind in two namespaces, then the upgrade started and killed once `when` holds. */
  async function killedWhen(
    prefix: string,
    when: (s: { ns: string; ns2: string; group: string }) => Promise<boolean>,
  ): Promise<{ s: { ns: string; ns2: string; group: string }; before: string[]; next: string }> {
    const s = await setup(prefix);
    const { old, next } = charts(s.dir, s.group);
    expect((await run(s.ns, old, helm4)).exitCode).toBe(0);
    await createObjects(s.group, [s.ns, s.ns2], COUNT);
    const before = await uids(s.group);
    const killed = spawnCli(['install', '--release', 'operator', '--namespace', s.ns, '--chart', next]);
    await killMidRun(
      killed,
      killed.waitFor('the kill point', () => when(s), { timeoutMs: 180_000, intervalMs: 50 }),
    );
    return { s, before, next };
  }

  async function finished(k: Awaited<ReturnType<typeof killedWhen>>): Promise<void> {
    const next = await run(k.s.ns, k.next, helm4);
    expect(next.exitCode, next.stdout + next.stderr).toBe(0);
    await expectMigrated(k.s, COUNT, k.before);
  }

  it('killed once the intermediate CRD is applied', async () => {
    const k = await killedWhen('stor-kill-mid', async ({ group }) =>
      (await crd(group, 'Widget')).versions.some((v) => v.name === 'v1' && v.storage),
    );
    const widgets = await crd(k.s.group, 'Widget');
    expect(widgets.versions).toEqual([
      { name: 'v1', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
    ]);
    expect(widgets.stored).toContain('v1alpha1');
    const labels = (await getJson(['get', 'crd', `widgets.${k.s.group}`], opts())).metadata.labels;
    expect(labels['helm-installer/crd-bridged']).toBe('operator');
    await finished(k);
  });

  it('killed during the writes', async () => {
    // The Gadgets migrate after the Widgets; the first Gadget written is the first listed (namespace, then name).
    let first: string | undefined;
    let firstGadget = '';
    const gadgetVersion = async (ns: string, group: string) =>
      (
        await getJson(['get', `gadgets.v1alpha1.${group}`, 'extra-0'], { ...opts(), namespace: ns }).catch(
          () => undefined,
        )
      )?.metadata?.resourceVersion as string | undefined;
    const k = await killedWhen('stor-kill-writes', async ({ ns, ns2, group }) => {
      firstGadget ||= [ns, ns2].sort()[0]!;
      const rv = await gadgetVersion(firstGadget, group);
      first ??= rv;
      return rv !== undefined && rv !== first;
    });
    expect(await gadgetVersion(firstGadget, k.s.group)).not.toBe(first);
    expect((await crd(k.s.group, 'Gadget')).stored).toContain('v1alpha1');
    await finished(k);
  });

  it("left after helm's upgrade with the CRDs not finished (a kill between the two): the next same-input run finishes it, the one after is unchanged", async () => {
    const s = await setup('stor-kill-after');
    const { old, next } = charts(s.dir, s.group);
    expect((await run(s.ns, old, helm4)).exitCode).toBe(0);
    await createObjects(s.group, [s.ns, s.ns2], 3);
    const before = await uids(s.group);
    expect((await run(s.ns, next, helm4)).exitCode).toBe(0);
    // The upgrade that bridged the CRDs marked its revision, and its last step took the CRDs' marks away.
    const revision = (await history('operator', s.ns)).at(-1)!.revision;
    const record = await getJson(['get', 'secret', `sh.helm.release.v1.operator.v${revision}`], {
      ...opts(),
      namespace: s.ns,
    });
    expect(record.metadata.labels['helm-installer/crds-bridged']).toBe('true');
    const bridged = () => getJson(['get', 'crd', '-l', 'helm-installer/crd-bridged'], opts());
    expect((await bridged()).items).toEqual([]);
    // What a kill after helm's upgrade and before the CRDs' last step leaves, built from there: the
    // Gadget CRD as its intermediate (v1alpha1 served beside v1, the label naming the release,
    // applied by the installer's field manager).
    const live = await getJson(['get', 'crd', `gadgets.${s.group}`], opts());
    const v1 = live.spec.versions[0];
    const intermediate = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: live.metadata.name, labels: { 'helm-installer/crd-bridged': 'operator' } },
      spec: { ...live.spec, versions: [v1, { ...v1, name: 'v1alpha1', served: true, storage: false }] },
    };
    const applied = await kubectl(
      ['apply', '--server-side', '--field-manager=helm-installer', '--force-conflicts', '-f', '-'],
      { ...opts(), input: JSON.stringify(intermediate) },
    );
    expect(applied.exitCode, applied.stderr).toBe(0);
    expect((await crd(s.group, 'Gadget')).versions.map((v) => v.name)).toEqual(['v1', 'v1alpha1']);

    const again = await run(s.ns, next, helm4);
    expect(again.exitCode, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain(
      `CustomResourceDefinition/gadgets.${s.group}: still serves the versions its chart drops`,
    );
    await expectMigrated(s, 3, before);
    expect((await bridged()).items).toEqual([]);
    const last = (await history('operator', s.ns)).at(-1)!.revision;
    expect(last).toBe(revision + 1);
    const third = await run(s.ns, next, helm4);
    expect(third.exitCode, third.stdout + third.stderr).toBe(0);
    expect(third.stderr).toContain('unchanged release operator');
    expect((await history('operator', s.ns)).at(-1)!.revision).toBe(last);
  });

  it('killed before the final CRD', async () => {
    const k = await killedWhen(
      'stor-kill-final',
      async ({ group }) => (await crd(group, 'Gadget')).stored.join() === 'v1',
    );
    expect((await crd(k.s.group, 'Gadget')).versions.map((v) => v.name)).toEqual(['v1', 'v1alpha1']);
    await finished(k);
  });
});
