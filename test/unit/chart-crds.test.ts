// The CRD verbs the RBAC preflight asks while helm renders: only for a chart directory that ships
// CRDs in crds/ (its own or an unpacked subchart's).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartCrdTexts, crdAccessGuess, crdNames } from '../../src/rbac/chart-crds.js';
import { readFileSync } from 'node:fs';
import { chartDir, tempDir } from '../helpers.js';

const CRD_ACCESS = ['get', 'list', 'watch', 'create', 'patch'].map((verb) => ({ group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb }));

function chart(files: Record<string, string>): string {
  const dir = join(tempDir('chart-crds'), 'app');
  for (const [rel, text] of Object.entries({ 'Chart.yaml': 'apiVersion: v2\nname: app\nversion: 0.1.0\n', ...files })) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

describe('crdAccessGuess', () => {
  it('the bundled chart (crds/promotions...): the five CRD verbs, cluster-wide', () => {
    expect(crdAccessGuess(chartDir)).toEqual(CRD_ACCESS);
  });

  it("an unpacked subchart's crds/ counts too", () => {
    expect(crdAccessGuess(chart({ 'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n', 'charts/sub/crds/x.yaml': 'kind: CustomResourceDefinition\n' }))).toEqual(CRD_ACCESS);
  });

  it('no crds/, an empty crds/, or an archive: nothing', () => {
    expect(crdAccessGuess(chart({ 'templates/cm.yaml': 'kind: ConfigMap\n' }))).toEqual([]);
    const empty = chart({});
    mkdirSync(join(empty, 'crds'));
    expect(crdAccessGuess(empty)).toEqual([]);
    const archive = join(tempDir('chart-crds'), 'app-0.1.0.tgz');
    writeFileSync(archive, 'not a directory');
    expect(crdAccessGuess(archive)).toEqual([]);
  });
});

const CHART = 'apiVersion: v2\nname: sub\nversion: 0.1.0\n';
const crd = (plural: string, group: string) =>
  `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: ${plural}.${group}\nspec:\n  group: ${group}\n  names: {plural: ${plural}, kind: X}\n`;

describe('chartCrdTexts: what helm creates from crds/ before a first install renders', () => {
  it('the bundled chart: its one CRD file, byte for byte', () => {
    expect(chartCrdTexts(chartDir)).toEqual([readFileSync(join(chartDir, 'crds', 'promotions.storefront.example.com.yaml'), 'utf8')]);
  });

  it('every subchart at any depth, nested folders under crds/, .yaml/.yml/.json only, parent first', () => {
    const dir = chart({
      'crds/b.yml': 'B',
      'crds/nested/a.json': 'A',
      'crds/README.md': 'not a manifest',
      'charts/one/Chart.yaml': CHART,
      'charts/one/crds/c.yaml': 'C',
      'charts/one/charts/deep/Chart.yaml': CHART,
      'charts/one/charts/deep/crds/d.yaml': 'D',
    });
    expect(chartCrdTexts(dir)).toEqual(['B', 'A', 'C', 'D']);
  });

  it('no crds/ anywhere: an empty list (a first install creates nothing before it renders)', () => {
    expect(chartCrdTexts(chart({ 'templates/cm.yaml': 'kind: ConfigMap\n' }))).toEqual([]);
  });

  it('unknown from files (undefined): the chart is an archive, or a subchart is', () => {
    const archive = join(tempDir('chart-crds'), 'app-0.1.0.tgz');
    writeFileSync(archive, 'not a directory');
    expect(chartCrdTexts(archive)).toBeUndefined();
    expect(chartCrdTexts(chart({ 'charts/sub-0.1.0.tgz': 'archived subchart' }))).toBeUndefined();
  });
});

describe('crdNames', () => {
  it('metadata.name of each CRD, several per file, empty documents skipped', () => {
    expect(crdNames([`${crd('widgets', 'a.example.com')}---\n---\n${crd('gadgets', 'b.example.com')}`, crd('things', 'c.example.com')])).toEqual([
      'widgets.a.example.com',
      'gadgets.b.example.com',
      'things.c.example.com',
    ]);
    expect(crdNames(chartCrdTexts(chartDir)!)).toEqual(['promotions.storefront.example.com']);
  });

  it('undefined (cannot tell what helm creates) for invalid YAML, another kind, or a CRD without a name', () => {
    expect(crdNames(['kind: CustomResourceDefinition\nmetadata: {name: x.y\n'])).toBeUndefined();
    expect(crdNames(['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n'])).toBeUndefined();
    expect(crdNames(['kind: CustomResourceDefinition\nmetadata: {}\n'])).toBeUndefined();
  });
});
