// The CRD step's pure parts: which CRDs a render has and where from (real helm 4 and 3 output),
// what each update does to a live CRD, what it changes, and whose fields the installer takes
// over. Expected values are written out by hand from the fixtures.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withDroppedVersions } from '../../src/crds/bridged.js';
import { chartCrds, crdVersions, inCrdsFolder } from '../../src/crds/chart-crds.js';
import { crdChanges, describeCrdChanges, schemaFields } from '../../src/crds/crd-changes.js';
import { decideCrd, specDiffers } from '../../src/crds/crd-decision.js';
import { mergeFieldSets, takeOverFields } from '../../src/crds/field-owners.js';
import { helm, helm3, helm4, tempDir } from '../helpers.js';
import { widgetCrd, writeWidgetChart } from '../fixtures/upgrade-paths/widget-charts.js';

const group = 'unit.example.com';
const release = { name: 'shop', namespace: 'ns' };
const live = (crd: Record<string, unknown>, storedVersions: string[], annotations?: Record<string, string>) => ({
  ...crd,
  metadata: { ...(crd.metadata as object), ...(annotations ? { annotations } : {}) },
  spec: { ...(crd.spec as object), conversion: { strategy: 'None' } },
  status: { storedVersions },
});
const chartCrd = (origin: 'crds' | 'templates', body: Record<string, unknown>) => ({
  name: `widgets.${group}`,
  origin,
  source: `widgets/${origin}/x.yaml`,
  body,
});

describe('chartCrds', () => {
  for (const [name, bin] of [
    ['helm4', helm4],
    ['helm3', helm3],
  ] as const) {
    it(`${name}: tells crds/ from templates by helm's Source line, subcharts included`, async () => {
      const dir = tempDir();
      const chart = writeWidgetChart(join(dir, 'widgets'), {
        version: '1.0.0',
        group,
        crdIn: 'crds',
        versions: [{ name: 'v1', storage: true, fields: ['size'] }],
        widget: { version: 'v1', spec: { size: 's' } },
      });
      writeWidgetChart(join(chart, 'charts', 'gadgets'), {
        name: 'gadgets',
        version: '1.0.0',
        group: 'sub.example.com',
        crdIn: 'templates',
        versions: [{ name: 'v1', storage: true, fields: [] }],
        widget: { version: 'v1', spec: {} },
      });
      writeWidgetChart(join(chart, 'charts', 'parts'), {
        name: 'parts',
        version: '1.0.0',
        group: 'parts.example.com',
        crdIn: 'crds',
        versions: [{ name: 'v1', storage: true, fields: [] }],
        widget: { version: 'v1', spec: {} },
      });
      // A subchart named crds whose CRD is a template: templates, whatever the folder is called.
      writeWidgetChart(join(chart, 'charts', 'crds'), {
        name: 'crds',
        version: '1.0.0',
        group: 'crds.example.com',
        crdIn: 'templates',
        versions: [{ name: 'v1', storage: true, fields: [] }],
        widget: { version: 'v1', spec: {} },
      });
      const out = await helm(bin, ['template', 'shop', chart, '--include-crds']);
      // The crds/ files begin with a comment and their own `---` (widget-charts.ts): still crds/.
      expect(out).toContain('# Source: widgets/crds/widgets.yaml\n# Copied');
      expect(
        chartCrds(out)
          .map((c) => [c.name, c.origin])
          .sort(),
      ).toEqual([
        ['widgets.crds.example.com', 'templates'],
        ['widgets.parts.example.com', 'crds'],
        ['widgets.sub.example.com', 'templates'],
        ['widgets.unit.example.com', 'crds'],
      ]);
    });
  }
});

describe('inCrdsFolder', () => {
  it.each([
    ['shop/crds/a.yaml', true],
    ['shop/crds/sub/a.yaml', true],
    ['shop/charts/operator/crds/a.yaml', true],
    ['shop/charts/a/charts/b/crds/x.yaml', true],
    ['shop/charts/crds/crds/x.yaml', true],
    // A subchart named crds (prometheus-operator-crds, kyverno 3) and a templates/crds/ folder are templates.
    ['shop/charts/crds/templates/x.yaml', false],
    ['shop/templates/crds/x.yaml', false],
    ['shop/templates/x.yaml', false],
    ['', false],
  ])('%s -> %s', (source, expected) => {
    expect(inCrdsFolder(source)).toBe(expected);
  });
});

describe('decideCrd', () => {
  const v1 = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size'] }]);
  const v1color = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size', 'color'] }]);
  const alphaAndV1 = widgetCrd(group, [
    { name: 'v1alpha1', fields: ['size'] },
    { name: 'v1', storage: true, fields: ['size'] },
  ]);
  const alphaOnly = widgetCrd(group, [{ name: 'v1alpha1', storage: true, fields: ['size'] }]);

  it("creates a missing crds/ CRD unless skip; a templates one is helm's", () => {
    expect(decideCrd(chartCrd('crds', v1), undefined, 'create-replace', release)).toEqual({
      name: `widgets.${group}`,
      origin: 'crds',
      adopt: false,
      apply: 'create',
    });
    expect(decideCrd(chartCrd('crds', v1), undefined, 'create', release).apply).toBe('create');
    expect(decideCrd(chartCrd('crds', v1), undefined, 'skip', release).apply).toBe('none');
    expect(decideCrd(chartCrd('templates', v1), undefined, 'create-replace', release).apply).toBe('none');
  });

  it('updates a changed crds/ CRD only under create-replace, and leaves an equal one alone', () => {
    const have = live(v1, ['v1']);
    const d = decideCrd(chartCrd('crds', v1color), have, 'create-replace', release);
    expect(d.apply).toBe('update');
    expect(d.changes).toEqual({
      versionsAdded: [],
      versionsRemoved: [],
      fieldsAdded: ['v1: spec.color'],
      fieldsRemoved: [],
    });
    expect(decideCrd(chartCrd('crds', v1color), have, 'create', release).apply).toBe('none');
    expect(decideCrd(chartCrd('crds', v1), have, 'create-replace', release).apply).toBe('none');
  });

  it('a field or a version only the live CRD has is a change (a one-way comparison misses it)', () => {
    expect(specDiffers(v1, live(v1color, ['v1']))).toBe(true);
    expect(specDiffers(v1, live(alphaAndV1, ['v1']))).toBe(true);
    expect(specDiffers(v1, live(v1, ['v1']))).toBe(false);
  });

  it('migrates when a dropped version is still stored but the storage version stays', () => {
    const d = decideCrd(chartCrd('crds', v1), live(alphaAndV1, ['v1alpha1', 'v1']), 'create-replace', release);
    expect(d.migrate).toEqual({ storage: 'v1', from: 'v1', drop: ['v1alpha1'], keep: ['v1'] });
    expect(d.refused).toBeUndefined();
    expect(d.changes?.versionsRemoved).toEqual(['v1alpha1']);
  });

  it('migrates to the new storage version when the version objects are written in goes too, for a templates CRD of this release as well', () => {
    const ours = { 'meta.helm.sh/release-name': 'shop', 'meta.helm.sh/release-namespace': 'ns' };
    for (const origin of ['crds', 'templates'] as const) {
      const d = decideCrd(chartCrd(origin, v1), live(alphaOnly, ['v1alpha1'], ours), 'create-replace', release);
      expect(d.apply).toBe('update');
      expect(d.migrate).toEqual({ storage: 'v1', from: 'v1alpha1', drop: ['v1alpha1'], keep: ['v1'] });
      expect(d.refused).toBeUndefined();
    }
  });

  it('keeps the stored versions the new CRD keeps; drops every one it does not, with or without objects', () => {
    const three = widgetCrd(group, [
      { name: 'v1alpha1', fields: [] },
      { name: 'v1beta1', fields: [] },
      { name: 'v1', storage: true, fields: [] },
    ]);
    const v2 = widgetCrd(group, [
      { name: 'v1', fields: [] },
      { name: 'v2', storage: true, fields: [] },
    ]);
    const d = decideCrd(chartCrd('crds', v2), live(three, ['v1alpha1', 'v1beta1', 'v1']), 'create-replace', release);
    expect(d.migrate).toEqual({ storage: 'v2', from: 'v1', drop: ['v1alpha1', 'v1beta1'], keep: ['v1', 'v2'] });
  });

  it("another release's templates CRD gets no migration (helm refuses to take it over); a CRD with no storage version is refused", () => {
    const theirs = { 'meta.helm.sh/release-name': 'other', 'meta.helm.sh/release-namespace': 'ns' };
    const d = decideCrd(chartCrd('templates', v1), live(alphaOnly, ['v1alpha1'], theirs), 'create-replace', release);
    expect([d.apply, d.migrate, d.refused]).toEqual(['none', undefined, undefined]);
    const noStorage = widgetCrd(group, [{ name: 'v1', fields: [] }]);
    expect(
      decideCrd(chartCrd('crds', noStorage), live(alphaOnly, ['v1alpha1']), 'create-replace', release).refused,
    ).toBe(
      `CRD widgets.${group} (widgets/crds/x.yaml): no version is marked storage: true; the vendor must fix the chart's CRD. Release shop was left as it was.`,
    );
  });

  it('a crds/ CRD that is not updated (create, skip) is not checked: nothing drops it', () => {
    expect(decideCrd(chartCrd('crds', v1), live(alphaOnly, ['v1alpha1']), 'skip', release).refused).toBeUndefined();
  });

  it("a changed templates CRD of this release (or one it adopts) is applied first as helm would; another release's is left to helm", () => {
    const ours = { 'meta.helm.sh/release-name': 'shop', 'meta.helm.sh/release-namespace': 'ns' };
    expect(decideCrd(chartCrd('templates', v1color), live(v1, ['v1'], ours), 'create-replace', release).apply).toBe(
      'update',
    );
    expect(decideCrd(chartCrd('templates', v1color), live(v1, ['v1']), 'skip', release)).toMatchObject({
      apply: 'update',
      adopt: true,
    });
    expect(
      decideCrd(
        chartCrd('templates', v1color),
        live(v1, ['v1'], { ...ours, 'meta.helm.sh/release-name': 'other' }),
        'create-replace',
        release,
      ).apply,
    ).toBe('none');
    expect(decideCrd(chartCrd('templates', v1), live(v1, ['v1'], ours), 'create-replace', release).apply).toBe('none');
  });

  it('adopts a templates CRD that no release owns, never one another release owns', () => {
    expect(decideCrd(chartCrd('templates', v1), live(v1, ['v1']), 'create-replace', release).adopt).toBe(true);
    expect(
      decideCrd(
        chartCrd('templates', v1),
        live(v1, ['v1'], { 'meta.helm.sh/release-name': 'other' }),
        'create-replace',
        release,
      ).adopt,
    ).toBe(false);
  });
});

describe('withDroppedVersions', () => {
  it("keeps the versions the chart drops served, never storage, until helm has upgraded; nothing dropped: the chart's own CRD", () => {
    const live = widgetCrd(group, [
      { name: 'v1alpha1', fields: ['size'] },
      { name: 'v1', storage: true, fields: ['size'] },
    ]);
    const desired = widgetCrd(group, [
      { name: 'v1', fields: ['size'] },
      { name: 'v2', storage: true, fields: ['size'] },
    ]);
    const bridged = withDroppedVersions(desired, live);
    expect(crdVersions(bridged)).toEqual([
      { name: 'v1', served: true, storage: false },
      { name: 'v2', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
    ]);
    expect(withDroppedVersions(desired, desired)).toBe(desired);
  });

  it('the intermediate CRD also serves a dropped version objects are stored in that the live CRD no longer served', () => {
    const liveCrd = widgetCrd(group, [
      { name: 'v1alpha1', fields: ['size'] },
      { name: 'v1', storage: true, fields: ['size'] },
    ]);
    const versions = (liveCrd.spec as { versions: Record<string, unknown>[] }).versions;
    versions[0]!.served = false;
    const desired = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size'] }]);
    expect(
      crdVersions(withDroppedVersions(desired, { ...liveCrd, status: { storedVersions: ['v1alpha1', 'v1'] } })),
    ).toEqual([
      { name: 'v1', served: true, storage: true },
      { name: 'v1alpha1', served: true, storage: false },
    ]);
    expect(withDroppedVersions(desired, { ...liveCrd, status: { storedVersions: ['v1'] } })).toBe(desired);
  });
});

describe('crdChanges', () => {
  it('names versions, the storage move and fields by path', () => {
    const before = widgetCrd(group, [{ name: 'v1', storage: true, fields: ['size', 'old'] }]);
    const after = widgetCrd(group, [
      { name: 'v1', fields: ['size', 'color'] },
      { name: 'v2', storage: true, fields: [] },
    ]);
    const c = crdChanges(before, after);
    expect(c).toEqual({
      versionsAdded: ['v2'],
      versionsRemoved: [],
      storage: { from: 'v1', to: 'v2' },
      fieldsAdded: ['v1: spec.color'],
      fieldsRemoved: ['v1: spec.old'],
    });
    expect(describeCrdChanges(c)).toBe('versions +v2; storage v1 -> v2; fields +v1: spec.color, -v1: spec.old');
  });

  it('reads nested and list item properties', () => {
    expect(
      schemaFields({ properties: { spec: { properties: { ports: { items: { properties: { name: {} } } } } } } }),
    ).toEqual(['spec', 'spec.ports', 'spec.ports[].name']);
  });
});

describe('takeOverFields', () => {
  const helmCreate = {
    manager: 'helm',
    operation: 'Update',
    apiVersion: 'apiextensions.k8s.io/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:group': {}, 'f:versions': {} } },
  };
  const kubectlApply = {
    manager: 'kubectl',
    operation: 'Apply',
    apiVersion: 'apiextensions.k8s.io/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:names': { 'f:kind': {} } } },
  };
  const injector = {
    manager: 'cainjector',
    operation: 'Update',
    apiVersion: 'apiextensions.k8s.io/v1',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:conversion': {} } },
  };
  const status = {
    manager: 'kube-apiserver',
    operation: 'Update',
    subresource: 'status',
    fieldsV1: { 'f:status': {} },
  };

  it("merges helm's and kubectl's entries into one Apply entry of the installer; controllers and status keep theirs", () => {
    const out = takeOverFields([helmCreate, injector, kubectlApply, status], 'apiextensions.k8s.io/v1')!;
    expect(out.slice(0, 2)).toEqual([injector, status]);
    expect(out[2]).toMatchObject({
      manager: 'helm-installer',
      operation: 'Apply',
      apiVersion: 'apiextensions.k8s.io/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:group': {}, 'f:versions': {}, 'f:names': { 'f:kind': {} } } },
    });
    expect(out).toHaveLength(3);
  });

  it('nothing to take over when the installer alone applied it', () => {
    expect(
      takeOverFields(
        [{ ...helmCreate, manager: 'helm-installer', operation: 'Apply' }, injector],
        'apiextensions.k8s.io/v1',
      ),
    ).toBeUndefined();
  });

  it('merges field sets deeply', () => {
    expect(mergeFieldSets({ 'f:a': { 'f:b': {} } }, { 'f:a': { 'f:c': {} }, 'f:d': {} })).toEqual({
      'f:a': { 'f:b': {}, 'f:c': {} },
      'f:d': {},
    });
  });
});
