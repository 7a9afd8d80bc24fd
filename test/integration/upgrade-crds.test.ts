// Upgrade paths with CRDs, on the real API server, through the built CLI with helm 4 and helm 3:
// each starts from a release made as the world makes it (the installer's own, or plain helm 3)
// and upgrades to a chart version whose CRDs change the way public charts' do (DESIGN.md
// section 9). What is checked is read from the cluster: the live CRD's versions, schema and
// stored versions, the custom resource, the release history; expected values are written out.
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm3, helm4, runCli, tempDir } from '../helpers.js';
import { type WidgetChart, writeWidgetChart } from '../fixtures/upgrade-paths/widget-charts.js';
import { history, install, killMidRun, kubeconfig, namespacesDeletedAfterAll, spawnCli } from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole } from './service-account.js';

const newNamespace = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();
const groups: string[] = [];
afterAll(async () => {
  await Promise.all(
    groups.map((g) =>
      kubectl(['delete', 'crd', `widgets.${g}`, '--ignore-not-found', '--wait=false'], { kubeconfig: kubeconfig() }),
    ),
  );
});

const HELMS = [
  ['helm4', helm4],
  ['helm3', helm3],
] as const;

/** A namespace and an API group of the test's own (CRDs are cluster-wide). */
async function setup(prefix: string): Promise<{ ns: string; group: string; dir: string }> {
  const ns = await newNamespace(prefix);
  const group = `${ns}.test.helm-installer.io`;
  groups.push(group);
  return { ns, group, dir: tempDir('hi-crds') };
}

function chart(dir: string, name: string, c: WidgetChart): string {
  return writeWidgetChart(join(dir, name), c);
}

/**
 * A chart version `version` (written to `dir`/`name`) whose crds/ CRD has `versions`, its Widget
 * at the last served version (the stored one, last in every chart here) with `spec`.
 */
function crdsChart(
  dir: string,
  name: string,
  group: string,
  version: string,
  versions: WidgetChart['versions'],
  spec: Record<string, string>,
): string {
  const widget = { version: versions.at(-1)!.name, spec };
  return chart(dir, name, { version, group, crdIn: 'crds', versions, widget });
}

/** Chart 1.0.0 with a crds/ CRD whose only version v1 has `fields`, and a Widget with `spec`. */
const oneVersion = (dir: string, name: string, group: string, fields: string[], spec: Record<string, string>) =>
  crdsChart(dir, name, group, '1.0.0', [{ name: 'v1', storage: true, fields }], spec);

/** 1.0.0 -> 2.0.0: the crds/ CRD's v1 gains the field color, which the Widget then sets. */
const colorAdded = (dir: string, group: string): { v1: string; v2: string } => ({
  v1: oneVersion(dir, 'v1', group, ['size'], { size: 's' }),
  v2: crdsChart(dir, 'v2', group, '2.0.0', [{ name: 'v1', storage: true, fields: ['size', 'color'] }], {
    size: 's',
    color: 'red',
  }),
});

/**
 * The storage-version path (1.0.0 -> 2.0.0 -> 3.0.0): v1alpha1 stored alone, then served beside
 * v1 which is stored, then dropped. `sizes` are the Widget's spec.size in each version.
 */
function storageMoved(
  dir: string,
  group: string,
  sizes: [string, string, string] = ['s', 's', 's'],
): { alpha: string; both: string; stable: string } {
  const alpha = { name: 'v1alpha1', storage: true, fields: ['size'] };
  const stored = { name: 'v1', storage: true, fields: ['size'] };
  return {
    alpha: crdsChart(dir, 'a', group, '1.0.0', [alpha], { size: sizes[0] }),
    both: crdsChart(dir, 'b', group, '2.0.0', [{ ...alpha, storage: false }, stored], { size: sizes[1] }),
    stable: crdsChart(dir, 'c', group, '3.0.0', [stored], { size: sizes[2] }),
  };
}

const run = (ns: string, chartDir: string, bin: string, extra: string[] = []) =>
  install('widgets', ns, ['--chart', chartDir, '--helm-bin', bin, ...extra], { HELM_INSTALLER_LOCK_TIMEOUT: '90s' });
/** A run that must succeed (exit 0), its output in the failure message. */
async function ok(ns: string, chartDir: string, bin: string, extra: string[] = []) {
  const r = await run(ns, chartDir, bin, extra);
  expect(r.exitCode, r.stdout.slice(-3000) + r.stderr).toBe(0);
  return r;
}
const plan = (ns: string, chartDir: string, bin: string) =>
  runCli(['plan', '--release', 'widgets', '--namespace', ns, '--chart', chartDir, '--helm-bin', bin], {
    env: { KUBECONFIG: kubeconfig() },
  });

async function crd(group: string): Promise<{
  versions: { name: string; storage: boolean; fields: string[] }[];
  stored: string[];
  annotations: Record<string, string>;
}> {
  const live = await getJson(['get', 'crd', `widgets.${group}`], { kubeconfig: kubeconfig() });
  return {
    versions: live.spec.versions.map((v: any) => ({
      name: v.name,
      storage: v.storage,
      fields: Object.keys(v.schema.openAPIV3Schema.properties.spec.properties ?? {}).sort(),
    })),
    stored: live.status.storedVersions,
    annotations: live.metadata.annotations ?? {},
  };
}

const widget = (ns: string, group: string, version: string) =>
  getJson(['get', `widgets.${version}.${group}`, 'main'], { kubeconfig: kubeconfig(), namespace: ns });

/** The CRD as read with its managed fields, and those fields as `manager operation` (status ones left out). */
async function managedCrd(group: string): Promise<{ live: any; managers: string[] }> {
  const live = await getJson(['get', 'crd', `widgets.${group}`, '--show-managed-fields'], { kubeconfig: kubeconfig() });
  const managers = live.metadata.managedFields
    .filter((m: any) => !m.subresource)
    .map((m: any) => `${m.manager} ${m.operation}`);
  return { live, managers };
}

describe('upgrade paths: CRDs', () => {
  for (const [name, bin] of HELMS) {
    it(`${name}: a crds/ CRD that gains a field is updated before helm, and the field reaches the custom resource; the next same-input run is a no-op`, async () => {
      const { ns, group, dir } = await setup(`crd-field-${name}`);
      const { v1, v2 } = colorAdded(dir, group);
      await ok(ns, v1, bin);
      // The plan names the CRD change, and the custom resource the old CRD cannot take is no outage (was exit 5).
      const planned = await plan(ns, v2, bin);
      expect(planned.exitCode, planned.stderr).toBe(10);
      expect(planned.stdout).toContain(
        `CRDs (before helm runs; never deleted):\n    update CRD widgets.${group} (crds/): fields +v1: spec.color\n`,
      );
      const second = await ok(ns, v2, bin);
      expect(second.stdout).toContain(`CRD widgets.${group} updated: fields +v1: spec.color`);
      expect((await crd(group)).versions).toEqual([{ name: 'v1', storage: true, fields: ['color', 'size'] }]);
      expect((await widget(ns, group, 'v1')).spec).toEqual({ size: 's', color: 'red' });
      await ok(ns, v2, bin);
      expect((await history('widgets', ns, bin)).map((r) => r.status)).toEqual(['superseded', 'deployed']);
    });
  }

  it('helm4 with --crds skip: the stale CRD is what plain helm leaves, and the failure names the way out', async () => {
    const { ns, group, dir } = await setup('crd-skip');
    const { v1, v2 } = colorAdded(dir, group);
    await ok(ns, v1, helm4);
    const skipped = await run(ns, v2, helm4, ['--crds', 'skip']);
    expect(skipped.exitCode).toBe(3);
    expect(skipped.stderr).toContain('failed to create typed patch object');
    expect(skipped.stderr).toContain("the cluster's CRD is older than the chart's");
    expect(skipped.stderr).toContain('--crds create-replace');
    expect((await crd(group)).versions).toEqual([{ name: 'v1', storage: true, fields: ['size'] }]);
  });

  for (const [name, bin] of HELMS) {
    it(`${name}: a new storage version, then the old stored version dropped: objects migrated, storedVersions trimmed`, async () => {
      const { ns, group, dir } = await setup(`crd-migrate-${name}`);
      const { alpha, both, stable } = storageMoved(dir, group, ['s', 'm', 'l']);
      await ok(ns, alpha, bin);
      await ok(ns, both, bin);
      expect(await crd(group)).toMatchObject({
        versions: [
          { name: 'v1alpha1', storage: false },
          { name: 'v1', storage: true },
        ],
        stored: ['v1alpha1', 'v1'],
      });
      const planned = await plan(ns, stable, bin);
      expect(planned.exitCode, planned.stderr).toBe(10);
      expect(planned.stdout).toContain(
        `update CRD widgets.${group} (crds/): versions -v1alpha1: 1 object rewritten in v1 first (through a CRD serving v1alpha1 and v1), then v1alpha1 dropped from its stored versions`,
      );
      const third = await ok(ns, stable, bin);
      expect(third.stdout).toContain(
        `CRD widgets.${group}: 1 objects stored in v1; v1alpha1 dropped from its stored versions`,
      );
      expect(await crd(group)).toMatchObject({ versions: [{ name: 'v1', storage: true }], stored: ['v1'] });
      expect((await widget(ns, group, 'v1')).spec).toEqual({ size: 'l' });
    });
  }

  it("helm4: from plain helm 3 and the CRD applied by hand as charts' upgrade notes say: migrated, then helm's and kubectl's fields taken over, the dropped version gone", async () => {
    const { ns, group, dir } = await setup('crd-by-hand');
    const { alpha, both, stable } = storageMoved(dir, group, ['s', 's', 'l']);
    await execa(helm3, ['install', 'widgets', alpha, '--namespace', ns, '--wait'], {
      env: { KUBECONFIG: kubeconfig() },
    });
    await kubectl(['apply', '-f', join(both, 'crds', 'widgets.yaml')], { kubeconfig: kubeconfig() });
    await ok(ns, stable, helm4);
    expect(await crd(group)).toMatchObject({ versions: [{ name: 'v1', storage: true }], stored: ['v1'] });
    expect((await managedCrd(group)).managers).toEqual(['helm-installer Apply']);
    expect((await widget(ns, group, 'v1')).spec).toEqual({ size: 'l' });
  });

  it('helm4: SIGKILL in the middle of a storage migration: the next run finishes it, no object lost', async () => {
    const { ns, group, dir } = await setup('crd-killed');
    const { alpha, both, stable } = storageMoved(dir, group);
    await ok(ns, alpha, helm4);
    // Stored in v1alpha1: enough of them that the migration takes a few seconds.
    const many = Array.from({ length: 1000 }, (_, i) => ({
      apiVersion: `${group}/v1alpha1`,
      kind: 'Widget',
      metadata: { name: `w${i}`, namespace: ns },
      spec: { size: String(i) },
    }));
    await kubectl(['apply', '-f', '-'], {
      kubeconfig: kubeconfig(),
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: many }),
      timeoutMs: 180_000,
    });
    await ok(ns, both, helm4);

    const killed = spawnCli(['install', '--release', 'widgets', '--namespace', ns, '--chart', stable]);
    await killMidRun(killed, killed.logged('rewriting its objects in v1', 120_000));
    expect((await crd(group)).stored).toEqual(['v1alpha1', 'v1']);

    await ok(ns, stable, helm4);
    expect(await crd(group)).toMatchObject({ versions: [{ name: 'v1', storage: true }], stored: ['v1'] });
    const widgets = await getJson(['get', `widgets.v1.${group}`], { kubeconfig: kubeconfig(), namespace: ns });
    expect(widgets.items).toHaveLength(1001);
    expect(widgets.items.find((w: any) => w.metadata.name === 'w999').spec).toEqual({ size: '999' });
  });

  it('helm4: a migration the installer may not make (no cluster-wide list/update of the kind) is exit 6 naming them, before anything changes', async () => {
    const { ns, group, dir } = await setup('crd-rbac');
    const { alpha, both, stable } = storageMoved(dir, group);
    await ok(ns, alpha, helm4);
    await ok(ns, both, helm4);
    // The shipped Role, and the widgets of this namespace: a namespaced grant, not the cluster-wide one a migration needs.
    const kc = await identity(ns, [
      ...shippedRole.rules,
      { apiGroups: [group], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    ]);
    const denied = await install('widgets', ns, ['--chart', stable, '--set', 'note=b'], { KUBECONFIG: kc });
    expect(denied.exitCode, denied.stdout + denied.stderr).toBe(6);
    expect(denied.stderr).toContain(
      `missing permissions for the CRD storage migration: list widgets.${group} (cluster-wide), update widgets.${group} (cluster-wide)`,
    );
    expect(await crd(group)).toMatchObject({
      versions: [
        { name: 'v1alpha1', storage: false },
        { name: 'v1', storage: true },
      ],
      stored: ['v1alpha1', 'v1'],
    });
    expect((await history('widgets', ns)).map((r) => r.status)).toEqual(['superseded', 'deployed']);
  });

  // A chart whose CRD drops the version objects are stored in: test/integration/crd-storage-migration.test.ts.

  for (const [name, bin] of HELMS) {
    it(`${name}: a CRD moved from crds/ into templates is adopted by the release, not refused as owned by nobody`, async () => {
      const { ns, group, dir } = await setup(`crd-move-${name}`);
      const inCrds = oneVersion(dir, 'a', group, ['size'], { size: 's' });
      const inTemplates = chart(dir, 'b', {
        version: '2.0.0',
        group,
        crdIn: 'templates',
        versions: [{ name: 'v1', storage: true, fields: ['size', 'color'] }],
        widget: { version: 'v1', spec: { size: 's', color: 'blue' } },
      });
      await ok(ns, inCrds, bin);
      await ok(ns, inTemplates, bin);
      const live = await crd(group);
      expect(live.annotations).toMatchObject({
        'meta.helm.sh/release-name': 'widgets',
        'meta.helm.sh/release-namespace': ns,
      });
      expect(live.versions).toEqual([{ name: 'v1', storage: true, fields: ['color', 'size'] }]);
      expect((await widget(ns, group, 'v1')).spec).toEqual({ size: 's', color: 'blue' });
    });
  }

  it('helm4: an upgrade that changes no CRD leaves them unread and unwritten (their digests), and a CRD edited by hand since is still corrected', async () => {
    const { ns, group, dir } = await setup('crd-digest');
    const v1 = oneVersion(dir, 'v1', group, ['size', 'color'], { size: 's', color: 'red' });
    await ok(ns, v1, helm4);
    const debugRun = (note: string) => ok(ns, v1, helm4, ['--set', `note=${note}`, '--log-level', 'debug']);
    // Helm 4's install applied crds/ again as its own field manager: the next upgrade applies the
    // unchanged CRD once to record it (its digest annotated, helm's fields taken over); no update.
    const recorded = await debugRun('b');
    expect(recorded.stdout).toContain(`CRD widgets.${group}: unchanged; applied again to record it as applied`);
    expect(recorded.stdout).not.toContain(`CRD widgets.${group} updated`);
    const applied = await managedCrd(group);
    expect(applied.live.metadata.annotations['helm-installer/applied-crd-digest']).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(applied.managers).toEqual(['helm-installer Apply']);
    // A value changes, no CRD: the CRD is neither read whole nor written.
    const unchanged = await debugRun('c');
    expect(unchanged.stdout).toContain('CRD step ended: 1 CRDs, 1 left as they are unread');
    expect(unchanged.stdout).not.toContain(`CRD widgets.${group} updated`);
    const after = await getJson(['get', 'crd', `widgets.${group}`], { kubeconfig: kubeconfig() });
    expect(after.metadata.resourceVersion).toBe(applied.live.metadata.resourceVersion);
    // By hand, as an operator's admin might: a schema field removed (kubectl patch, its own field manager).
    await kubectl(
      [
        'patch',
        'crd',
        `widgets.${group}`,
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color"}]',
      ],
      { kubeconfig: kubeconfig() },
    );
    expect((await crd(group)).versions).toEqual([{ name: 'v1', storage: true, fields: ['size'] }]);
    // The digest annotation is untouched by the edit, yet the next upgrade reads the CRD and puts the field back.
    const corrected = await debugRun('d');
    expect(corrected.stdout).toContain(`CRD widgets.${group} updated: fields +v1: spec.color`);
    expect((await crd(group)).versions).toEqual([{ name: 'v1', storage: true, fields: ['color', 'size'] }]);
    const again = await debugRun('e');
    expect(again.stdout).toContain('CRD step ended: 1 CRDs, 1 left as they are unread');
  });
});

describe('upgrade paths: a release helm 3 made', () => {
  it('plain helm 3 install, a hand edit, then the installer on helm 4: server-side apply from then on, the edit taken back, a dropped key removed, then a no-op', async () => {
    const { ns, group, dir } = await setup('from-helm3');
    const base = {
      group,
      crdIn: 'crds' as const,
      versions: [{ name: 'v1', storage: true, fields: ['size'] }],
      widget: { version: 'v1', spec: { size: 's' } },
    };
    const v1 = chart(dir, 'a', { ...base, version: '1.0.0', extraData: { legacy: 'kept' } });
    const v2 = chart(dir, 'b', { ...base, version: '2.0.0' });
    const env = { KUBECONFIG: kubeconfig() };
    await execa(helm3, ['install', 'widgets', v1, '--namespace', ns, '--wait'], { env });
    await kubectl(['patch', 'configmap', 'widgets-config', '--type', 'merge', '-p', '{"data":{"note":"by-hand"}}'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
    });

    await ok(ns, v1, helm4, ['--set', 'note=b']);
    const config = await getJson(['get', 'configmap', 'widgets-config', '--show-managed-fields'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
    });
    expect(config.data).toEqual({ note: 'b', legacy: 'kept' });
    const helmEntries = config.metadata.managedFields
      .filter((m: any) => m.manager === 'helm')
      .map((m: any) => m.operation);
    expect(helmEntries).toEqual(['Apply']);
    const meta = JSON.parse(
      (await execa(helm4, ['get', 'metadata', 'widgets', '--namespace', ns, '-o', 'json'], { env })).stdout,
    );
    expect(meta.applyMethod).toBe('ssa');

    await ok(ns, v2, helm4, ['--set', 'note=b']);
    expect(
      (await getJson(['get', 'configmap', 'widgets-config'], { kubeconfig: kubeconfig(), namespace: ns })).data,
    ).toEqual({ note: 'b' });

    await ok(ns, v2, helm4, ['--set', 'note=b']);
    expect((await history('widgets', ns)).map((r) => r.revision)).toEqual([1, 2, 3]);
  });
});
