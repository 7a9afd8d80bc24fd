// The CRD verbs the RBAC preflight asks while helm renders: only for a chart directory that ships
// CRDs in crds/ (its own or an unpacked subchart's). And when install may let helm's own render be
// its check (render-gate.ts): only for a chart known to ship none.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crdAccessGuess } from '../../src/rbac/chart-crds.js';
import { chartDir, tempDir } from '../helpers.js';

const CRD_ACCESS = ['get', 'list', 'watch', 'create', 'patch'].map((verb) => ({
  group: 'apiextensions.k8s.io',
  resource: 'customresourcedefinitions',
  verb,
}));

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
    expect(
      crdAccessGuess(
        chart({
          'charts/sub/Chart.yaml': 'apiVersion: v2\nname: sub\nversion: 0.1.0\n',
          'charts/sub/crds/x.yaml': 'kind: CustomResourceDefinition\n',
        }),
      ),
    ).toEqual(CRD_ACCESS);
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

describe('crdAccessGuess in subcharts', () => {
  it("the CRD verbs are guessed for a nested subchart's CRDs too, not for a packed one", () => {
    expect(crdAccessGuess(chart({ 'charts/a/charts/b/crds/c.yaml': 'kind: CustomResourceDefinition\n' }))).toEqual(
      CRD_ACCESS,
    );
    expect(crdAccessGuess(chart({ 'charts/sub-1.0.0.tgz': 'packed' }))).toEqual([]);
  });
});
