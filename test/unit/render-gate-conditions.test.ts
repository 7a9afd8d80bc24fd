// When install lets helm's own render be the check (render-gate.ts): a chart known to ship no
// CRDs, and a release read twice that nobody changed in between.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sameRevisions } from '../../src/commands/install-command.js';
import { crdAccessGuess, shipsNoCrds } from '../../src/rbac/chart-crds.js';
import { chartDir, tempDir } from '../helpers.js';

function chart(files: Record<string, string>): string {
  const dir = tempDir('chart-crds');
  for (const [path, text] of Object.entries({ 'Chart.yaml': 'apiVersion: v2\nname: c\nversion: 0.1.0\n', ...files })) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('shipsNoCrds', () => {
  it('true for a chart directory without crds/, or with an empty one, and unpacked subcharts without any', () => {
    expect(shipsNoCrds(chart({ 'templates/a.yaml': 'x: 1\n' }))).toBe(true);
    const empty = chart({ 'templates/a.yaml': 'x: 1\n', 'charts/sub/Chart.yaml': 'name: sub\n' });
    mkdirSync(join(empty, 'crds'));
    expect(shipsNoCrds(empty)).toBe(true);
  });

  it('false for CRDs in the chart, in a subchart at any depth, a packed subchart, an archive, a path that is not there', () => {
    expect(shipsNoCrds(chart({ 'crds/a.yaml': 'kind: CustomResourceDefinition\n' }))).toBe(false);
    expect(shipsNoCrds(chart({ 'charts/a/charts/b/crds/c.yaml': 'kind: CustomResourceDefinition\n' }))).toBe(false);
    expect(shipsNoCrds(chart({ 'charts/sub-1.0.0.tgz': 'not looked into' }))).toBe(false);
    expect(shipsNoCrds(join(chart({ 'x.tgz': 'archive' }), 'x.tgz'))).toBe(false);
    expect(shipsNoCrds('/nonexistent/chart')).toBe(false);
    // The bundled chart ships its CRD: installs of it render before helm applies crds/.
    expect(shipsNoCrds(chartDir)).toBe(false);
  });

  it("the CRD verbs are guessed for a nested subchart's CRDs too, not for a packed one", () => {
    expect(crdAccessGuess(chart({ 'charts/a/charts/b/crds/c.yaml': 'kind: CustomResourceDefinition\n' })).map((p) => p.verb)).toEqual(['get', 'list', 'watch', 'create', 'patch']);
    expect(crdAccessGuess(chart({ 'charts/sub-1.0.0.tgz': 'packed' }))).toEqual([]);
  });
});

describe('sameRevisions', () => {
  const r = (revision: number, status: string) => ({ revision, status, labels: {} });
  it('the same revisions with the same statuses, in order; anything else is a change', () => {
    expect(sameRevisions([], [])).toBe(true);
    expect(sameRevisions([r(3, 'deployed')], [r(3, 'deployed')])).toBe(true);
    expect(sameRevisions([r(3, 'deployed'), r(4, 'pending-upgrade')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([r(3, 'superseded')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([r(4, 'deployed')], [r(3, 'deployed')])).toBe(false);
    expect(sameRevisions([], [r(1, 'deployed')])).toBe(false);
  });
});
