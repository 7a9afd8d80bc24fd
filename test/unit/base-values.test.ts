// Vendor base values belong to the bundled chart (issue 7 item 6): <app-dir>/values is the default
// only for the chart under the app directory; a --chart from elsewhere gets none unless
// --base-values names them. Pure option logic, then through the built CLI with the real helm.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultBaseValues } from '../../src/options/config.js';
import { appDir, chartDir, repoRoot, runCli, tempDir } from '../helpers.js';

describe('defaultBaseValues', () => {
  const app = tempDir('base-values-app');
  mkdirSync(join(app, 'values'), { recursive: true });
  mkdirSync(join(app, 'demo'), { recursive: true });

  it('gives <app-dir>/values to the bundled chart (no --chart, or a --chart inside the app directory)', () => {
    expect(defaultBaseValues(app)).toEqual([join(app, 'values')]);
    expect(defaultBaseValues(app, join(app, 'demo'))).toEqual([join(app, 'values')]);
    expect(defaultBaseValues(app, join(app, 'demo.tgz'))).toEqual([join(app, 'values')]);
  });

  it('gives nothing to a chart from elsewhere', () => {
    expect(defaultBaseValues(app, '/charts/other.tgz')).toEqual([]);
    expect(defaultBaseValues(app, join(app, '..', 'other'))).toEqual([]);
    expect(defaultBaseValues(app, app)).toEqual([]);
  });
});

describe('values of a --chart from elsewhere', () => {
  it("carry none of the bundled chart's base values, unless --base-values says so", async () => {
    const other = join(repoRoot, 'test/fixtures/charts/kind-list');
    const plain = await runCli(['values', '--chart', other, '-o', 'json']);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toEqual({});
    const dir = tempDir('base-values-explicit');
    writeFileSync(join(dir, 'base.yaml'), 'replicas: 3\n');
    const explicit = await runCli(['values', '--chart', other, '--base-values', join(dir, 'base.yaml'), '-o', 'json']);
    expect(JSON.parse(explicit.stdout)).toEqual({ replicas: 3 });
    // The bundled chart still gets them: exactly what app/values/base.yaml says.
    const bundled = await runCli(['values', '--chart', chartDir, '-o', 'json', '--show-secrets']);
    expect(bundled.exitCode, bundled.stderr).toBe(0);
    expect(JSON.parse(bundled.stdout)).toEqual(parse(readFileSync(join(appDir, 'values', 'base.yaml'), 'utf8')));
  });
});
