// The app's input as every command sees it (issue 39): one chart is a list of one release, its
// options untouched and no scope (no inventory, app revision, rollback, prune or last-run); a
// release plan is its enabled releases in dependency order, each with its own options, and a scope.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appChartPaths, appGraph, appReleases, appScope, resolveInput } from '../../src/inputs/app-input.js';
import type { CommonOptions } from '../../src/options/config.js';
import { repoRoot, tempDir } from '../helpers.js';

const PLAN = `apiVersion: helm-installer/v1
kind: ReleasePlan
app: shop
releases:
  - name: web
    chart: charts/b
    dependsOn: [db]
    timeout: 3m
  - name: db
    chart: charts/a
    namespace: data
  - name: extra
    chart: charts/a
    enabled: false
`;

function appDir(plan?: string): string {
  const dir = tempDir('app-input');
  for (const c of ['a', 'b']) mkdirSync(join(dir, 'charts', c), { recursive: true });
  if (plan) writeFileSync(join(dir, 'releases.yaml'), plan);
  return dir;
}

const options = (dir: string, more: Partial<CommonOptions> = {}) =>
  ({ appDir: dir, values: [], sets: [], namespace: undefined, ...more }) as unknown as CommonOptions;

describe('one chart', () => {
  const dir = appDir();
  const o = options(dir, { chart: join(dir, 'charts', 'a'), release: 'mine' });
  const input = resolveInput(o);

  it('is a list of one, its options as given, with no scope', () => {
    expect(appScope(input)).toBeUndefined();
    const graph = appGraph(o, input, 'ns1', {});
    expect(graph).toEqual({ releases: [{ options: o, name: 'mine', namespace: 'ns1', deps: [] }] });
    expect(graph.releases[0]!.options).toBe(o);
    expect(appReleases(o, input, 'ns1')).toEqual([{ options: o }]);
    expect(appChartPaths(o, input)).toEqual([join(dir, 'charts', 'a')]);
  });
});

describe('a release plan', () => {
  const dir = appDir(PLAN);
  const o = options(dir);
  const input = resolveInput(o);

  it('has a scope naming its file and app', () => {
    expect(appScope(input)).toEqual({ file: join(dir, 'releases.yaml'), app: 'shop' });
  });

  it('runs its enabled releases, each after its dependencies, with their own options', () => {
    const { releases, scope } = appGraph(o, input, 'ns1', {});
    expect(releases.map((r) => [r.key, r.name, r.namespace, r.deps, r.timeout])).toEqual([
      ['data/db', 'db', 'data', [], undefined],
      ['ns1/web', 'web', 'ns1', ['data/db'], '3m'],
    ]);
    expect(releases.map((r) => [r.options.chart, r.options.release, r.options.namespace])).toEqual([
      [join(dir, 'charts', 'a'), 'db', 'data'],
      [join(dir, 'charts', 'b'), 'web', 'ns1'],
    ]);
    expect(scope?.graph.disabled.map((r) => r.key)).toEqual(['ns1/extra']);
  });

  it('lists every release, switched on or not, for images and specs', () => {
    expect(appReleases(o, input, 'default').map((r) => r.name)).toEqual(['web', 'db', 'extra']);
    expect(appChartPaths(o, input)).toEqual(['b', 'a', 'a'].map((c) => join(dir, 'charts', c)));
  });
});

describe('one path (issue 39)', () => {
  it('app-input.ts is the only source file that tells one chart from a release plan', () => {
    const src = join(repoRoot, 'src');
    const asking = (readdirSync(src, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /\binput\.plan\b/.test(readFileSync(join(src, f), 'utf8')));
    expect(asking).toEqual([join('inputs', 'app-input.ts')]);
  });
});
