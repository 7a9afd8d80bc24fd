// `images`, `render --registry` and the KOTS list through the built CLI and the real helm.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { chartDir, runCli, tempDir } from '../helpers.js';

const dir = tempDir('images-cli');
// The storefront chart alone: the bundled app's release plan is test/cli/release-plan.test.ts's.
const cr = ['--chart', chartDir, '--image-path', 'Promotion:spec.image'];

const expected = [
  'busybox:1.36.1',
  'docker.io/library/alpine@sha256:beefdbd8a1da6d2915566fde36db9db0b524eb737fc57cd1367effd16dc0d06d',
  'docker.io/redis:7.2.5-alpine',
  'ghcr.io/acme-shop/storefront-migrations:2.3.1',
  'ghcr.io/acme-shop/storefront-web:2.3.1',
  'postgres:16.4',
  'quay.io/acme-shop/promo-banner:1.2.0',
  'quay.io/oliver006/redis_exporter:v1.62.0',
];

describe('helm-installer images', () => {
  it('lists every image, hooks, subchart, hard-coded init container and custom resource included, sorted', async () => {
    const r = await runCli(['images', ...cr]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(expected);
  });

  it('union passes add images behind toggles', async () => {
    const cacheOff = await runCli(['images', ...cr, '--set', 'cache.enabled=false']);
    expect(cacheOff.stdout).not.toContain('redis');
    const union = await runCli(['images', ...cr, '--set', 'cache.enabled=false', '--union-set', 'cache.enabled=true']);
    expect(union.stdout.trim().split('\n')).toEqual(expected);
    // A union file is one more -f layer: above the customer's files, below --set (helm's order).
    const off = join(dir, 'cache-off.yaml');
    writeFileSync(off, 'cache:\n  enabled: false\n');
    const toggles = join(dir, 'toggles.yaml');
    writeFileSync(toggles, 'cache:\n  enabled: true\n');
    const byFile = await runCli(['images', ...cr, '--values', off, '--union-values', toggles]);
    expect(byFile.stdout.trim().split('\n')).toEqual(expected);
  });

  it('--format kots prints a pasteable additionalImages block, normalised', async () => {
    const r = await runCli(['images', ...cr, '--format', 'kots']);
    expect(r.exitCode).toBe(0);
    const app = `apiVersion: kots.io/v1beta1\nkind: Application\nmetadata:\n  name: storefront\nspec:\n  title: Storefront\n${r.stdout}`;
    const doc = parseAllDocuments(app)[0]!;
    expect(doc.errors).toEqual([]);
    const images = (doc.toJS() as { spec: { additionalImages: string[] } }).spec.additionalImages;
    expect(images).toHaveLength(8);
    expect(images).toContain('docker.io/library/busybox:1.36.1');
    expect(images).toContain('docker.io/library/postgres:16.4');
  });

  it('--check passes on a complete Application and fails (exit 6) naming what a partial one misses', async () => {
    const kots = await runCli(['images', ...cr, '--format', 'kots']);
    const complete = join(dir, 'complete.yaml');
    writeFileSync(
      complete,
      `apiVersion: kots.io/v1beta1\nkind: Application\nmetadata:\n  name: storefront\nspec:\n  title: Storefront\n${kots.stdout}`,
    );
    const ok = await runCli(['images', ...cr, '--check', complete]);
    expect(ok.exitCode, ok.stderr).toBe(0);

    const partial = join(dir, 'partial.yaml');
    writeFileSync(
      partial,
      'apiVersion: kots.io/v1beta1\nkind: Application\nmetadata:\n  name: storefront\nspec:\n  title: Storefront\n  additionalImages:\n    - ghcr.io/acme-shop/storefront-web:2.3.1\n    - docker.io/library/postgres:16.4\n',
    );
    const bad = await runCli(['images', ...cr, '--check', partial]);
    expect(bad.exitCode).toBe(6);
    expect(bad.stderr).toMatch(/misses:/);
    expect(bad.stderr).toContain('busybox:1.36.1');
    expect(bad.stderr).toContain('quay.io/acme-shop/promo-banner:1.2.0');
    expect(bad.stderr).not.toMatch(/^\s+postgres:16\.4$/m);
  });

  it('with --registry: the KOTS local names; two sources on one local name are refused, naming both', async () => {
    const r = await runCli(['images', ...cr, '--registry', 'registry.local:5000/acme']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('registry.local:5000/acme/storefront-web:2.3.1');
    expect(r.stdout).toContain(
      'registry.local:5000/acme/alpine@sha256:beefdbd8a1da6d2915566fde36db9db0b524eb737fc57cd1367effd16dc0d06d',
    );
    // The subchart's redis is docker.io/redis:7.2.5-alpine; point the database at bitnami/redis with the same tag.
    const clash = await runCli([
      'images',
      ...cr,
      '--registry',
      'registry.local:5000/acme',
      '--set',
      'database.image.repository=bitnami/redis',
      '--set',
      'database.image.tag=7.2.5-alpine',
      '--set',
      'database.image.registry=docker.io',
    ]);
    expect(clash.exitCode).toBe(3);
    expect(clash.stderr).toContain('bitnami/redis');
    expect(clash.stderr).toMatch(/redis:7\.2\.5-alpine/);
  });
});

describe('helm-installer render --registry', () => {
  it('rewrites every pod template, hooks and CronJob included, adds the pull secret, keeps the rest', async () => {
    const r = await runCli([
      'render',
      ...cr,
      '--registry',
      'registry.local:5000/acme',
      '--image-pull-secret',
      'regcred',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const objects = parseAllDocuments(r.stdout)
      .map((d) => d.toJS())
      .filter(Boolean) as any[];
    const images = r.stdout.match(/^\s*(- )?image: .*$/gm)!.map((l) => l.replace(/^\s*(- )?image: /, ''));
    expect(images.length).toBeGreaterThanOrEqual(8);
    for (const image of images) expect(image).toMatch(/^"?registry\.local:5000\/acme\//);
    const hook = objects.find((o) => o.kind === 'Job' && o.metadata.annotations?.['helm.sh/hook']);
    expect(hook.spec.template.spec.imagePullSecrets).toContainEqual({ name: 'regcred' });
    const cron = objects.find((o) => o.kind === 'CronJob');
    expect(cron.spec.jobTemplate.spec.template.spec.imagePullSecrets).toContainEqual({ name: 'regcred' });
    expect(objects.find((o) => o.kind === 'CustomResourceDefinition')).toBeTruthy();
  });
});
