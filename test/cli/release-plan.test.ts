// A release plan through the built CLI with no cluster (issue 21, item 3): `images` lists the
// images of every release the plan names (execa strips stdout's final newline), switched on or not, one reference a line
// (`--format json` names the releases that need each); the KOTS block and --check cover them all; the one-chart commands refuse the app.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, tempDir } from '../helpers.js';

const app = join(repoRoot, 'test', 'fixtures', 'release-plan');
const operator = 'registry.example.com/plan-test/operator:1.0';
const part = 'registry.example.com/plan-test/part:1.0';

describe('a release plan without a cluster', () => {
  it('images: every release, switched off ones too, one reference a line; --format json names the releases of each', async () => {
    const r = await runCli(['images', '--app-dir', app], { env: { PLAN_TEST_CACHE: 'false' } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${operator}\n${part}`);
    const local = await runCli(['images', '--app-dir', app, '--registry', 'registry.local:5000/shop']);
    expect(local.stdout).toBe('registry.local:5000/shop/operator:1.0\nregistry.local:5000/shop/part:1.0');
    const json = await runCli(
      ['images', '--app-dir', app, '--registry', 'registry.local:5000/shop', '--format', 'json'],
      { env: { PLAN_TEST_CACHE: 'false' } },
    );
    expect(json.exitCode, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.schemaVersion).toBe(1);
    expect(doc.registry).toBe('registry.local:5000/shop');
    expect(doc.images.map((i: any) => [i.reference, i.sources, i.artifact, i.releases])).toEqual([
      ['registry.local:5000/shop/operator:1.0', [operator], false, ['operator']],
      ['registry.local:5000/shop/part:1.0', [part], false, ['cache', 'report', 'web']],
    ]);
    expect(doc.images[0].places[0]).toMatch(
      /^release operator, Deployment operator, spec\.template\.spec\.containers\[0\]\.image, /,
    );
  });

  it('images --why names the release of each place; --format kots and --check cover every release', async () => {
    const why = await runCli(['images', '--app-dir', app, '--why', operator]);
    expect(why.stdout).toBe(
      'release operator, Deployment operator, spec.template.spec.containers[0].image, from operator/templates/deployment.yaml, line 37 of the rendered manifests',
    ); // after the CRD's lines: helm renders crds/ first
    const kots = await runCli(['images', '--app-dir', app, '--format', 'kots']);
    expect(kots.stdout.endsWith(`  additionalImages:\n    - ${operator}\n    - ${part}`)).toBe(true);
    const file = join(tempDir('plan-kots'), 'kots-app.yaml');
    writeFileSync(
      file,
      `apiVersion: kots.io/v1beta1\nkind: Application\nmetadata: {name: shop}\nspec:\n  title: Shop\n  additionalImages:\n    - ${part}\n`,
    );
    const check = await runCli(['images', '--app-dir', app, '--check', file]);
    expect(check.exitCode).toBe(6);
    expect(check.stderr).toContain(`cause: ${file} lists 1 of 2 images; additionalImages misses:\n  ${operator}\n`);
  });

  it('customer values go to the release they are named after; one naming no release is exit 3', async () => {
    const dir = tempDir('plan-values');
    writeFileSync(join(dir, 'operator.yaml'), 'image: registry.example.com/plan-test/operator:2.0\n');
    const r = await runCli(['images', '--app-dir', app, '--values', dir]);
    expect(r.stdout).toBe(`registry.example.com/plan-test/operator:2.0\n${part}`);
    writeFileSync(join(dir, 'values.yaml'), 'image: x\n');
    const refused = await runCli(['images', '--app-dir', app, '--values', dir]);
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain(
      `cause: customer values file ${join(dir, 'values.yaml')} names no release of the plan (releases: operator, web, report, cache)`,
    );
  });

  it('--base-values beside a plan is a usage error (each release names its own vendor values), never dropped', async () => {
    const values = join(tempDir('plan-base'), 'vendor.yaml');
    writeFileSync(values, 'image: registry.example.com/plan-test/other:9.9\n');
    for (const given of [['--base-values', values], []]) {
      const r = await runCli(['images', '--app-dir', app, ...given], {
        env: given.length ? {} : { HELM_INSTALLER_BASE_VALUES: values },
      });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        "cause: --base-values (HELM_INSTALLER_BASE_VALUES) was given, but a release plan names each release's vendor values (its `values` list)",
      );
    }
  });

  it('render and values take one chart: the app with a plan is a usage error naming the plan file', async () => {
    for (const command of ['render', 'values']) {
      const r = await runCli([command, '--app-dir', app]);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `cause: this command takes one chart, and the app directory has a release plan (${join(app, 'releases.yaml')}) naming several`,
      );
    }
    const one = await runCli(['render', '--app-dir', app, '--chart', join(app, 'charts', 'operator')]);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout).toContain(`image: "${operator}"`);
  });
});
