// Subcharts' own defaults and annotations (issue 7): image settings that exist only in a
// subchart's values.yaml get exact registry hints (an unpacked subchart under an alias, an
// archived one), and the helm.sh/images annotation of an archived subchart (charts/*.tgz) is
// read. The archive is packaged here by the real helm from test/fixtures/subcharts/metrics (built,
// not committed); the parent chart is also packaged whole, so the archive-in-archive path runs.
// Through the built CLI and the real helm 4 and helm 3; expected names written by hand.
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm, helm3, helm4, repoRoot, runCli, tempDir } from '../helpers.js';

const REGISTRY = 'registry.local:5000/acme';
const L = REGISTRY;
const dir = tempDir('subcharts');
const chartDir = join(dir, 'subchart-defaults');
cpSync(join(repoRoot, 'test/fixtures/charts/subchart-defaults'), chartDir, { recursive: true });
const packaged = (async () => {
  await helm(helm4, ['package', join(repoRoot, 'test/fixtures/subcharts/metrics'), '-d', join(chartDir, 'charts')]);
  await helm(helm4, ['package', chartDir, '-d', dir]);
})();

const IMAGES = [
  'docker.io/acme/web:2.0.0',
  'docker.io/bitnami/redis:7.4.2',
  'quay.io/acme/metrics-exporter:0.9.0',
  'quay.io/acme/metrics-plugin:1.2.0',
];
const LOCAL = [`${L}/metrics-exporter:0.9.0`, `${L}/metrics-plugin:1.2.0`, `${L}/redis:7.4.2`, `${L}/web:2.0.0`];
// Exact KOTS names, tags kept; the subchart sections under the keys helm gives them.
const HINTS = {
  image: { registry: REGISTRY, repository: 'web' },
  sessions: { image: { registry: REGISTRY, repository: 'redis' } },
  metrics: { exporter: { image: { repository: `${L}/metrics-exporter` } } },
};
const lines = (s: string) => s.trim().split('\n').filter(Boolean);

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('subchart defaults and annotations, %s', (_name, helmBin) => {
  const env = { HELM_BIN: helmBin };

  describe.each([
    ['directory', () => chartDir],
    ['archive', () => join(dir, 'subchart-defaults-0.1.0.tgz')],
  ])('chart as a %s', (_format, chart) => {
    it('values --registry hints the image settings that only subcharts define', async () => {
      await packaged;
      const r = await runCli(['values', '--chart', chart(), '--registry', REGISTRY, '-o', 'json'], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(HINTS);
      expect(r.stderr).toContain('registry hints applied');
    });

    it("images lists the archived subchart's helm.sh/images annotation; render --registry rewrites every image", async () => {
      await packaged;
      const listed = await runCli(['images', '--chart', chart()], { env });
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(lines(listed.stdout)).toEqual(IMAGES);
      const why = await runCli(['images', '--chart', chart(), '--why', 'quay.io/acme/metrics-plugin:1.2.0'], { env });
      expect(lines(why.stdout)).toEqual(['helm.sh/images annotation of chart metrics (plugin)']);
      const local = await runCli(['images', '--chart', chart(), '--registry', REGISTRY], { env });
      expect(lines(local.stdout)).toEqual(LOCAL);
      const r = await runCli(['render', '--chart', chart(), '--registry', REGISTRY], { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const images = [...r.stdout.matchAll(/^\s*image: (\S+)$/gm)].map((m) => m[1]).sort();
      expect(images).toEqual([
        `${L}/metrics-exporter:0.9.0`,
        `${L}/metrics-exporter:0.9.0`,
        `${L}/redis:7.4.2`,
        `${L}/redis:7.4.2`,
        `${L}/web:2.0.0`,
      ]);
    });
  });
});

it("install on helm 3: the subcharts' hook images are covered by exact hints, so the preflight goes on to the registry", async () => {
  await packaged;
  // A loopback registry nothing listens on: the registry check fails (exit 6); the hook check
  // before it (helm 3 does not post-render hooks) has nothing to refuse.
  const r = await runCli(['install', '--chart', chartDir, '--registry', '127.0.0.1:1/acme'], {
    env: { HELM_BIN: helm3, KUBECONFIG: '/nonexistent/kubeconfig' },
  });
  expect(r.exitCode, r.stderr).toBe(6);
  expect(r.stderr).not.toContain('does not post-render hooks');
  expect(r.stderr).toMatch(/^release: subchart-defaults {2}action: registry preflight$/m);
  expect(r.stderr).toContain('cause: Cannot reach the registry 127.0.0.1:1');
});

describe('an image-verifying chart as a dependency of a parent without the switch', () => {
  const parent = join(dir, 'verifying-subchart');
  cpSync(join(repoRoot, 'test/fixtures/charts/verifying-subchart'), parent, { recursive: true });
  cpSync(join(repoRoot, 'test/fixtures/charts/image-verify'), join(parent, 'charts', 'image-verify'), {
    recursive: true,
  });

  it.each([
    ['helm 4', helm4],
    ['helm 3', helm3],
  ])(
    'the switch is set at the root (helm hands root globals to subcharts) and the hints apply, %s',
    async (_name, helmBin) => {
      const r = await runCli(['values', '--chart', parent, '--registry', REGISTRY, '-o', 'json'], {
        env: { HELM_BIN: helmBin },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        global: { imageRegistry: REGISTRY, security: { allowInsecureImages: true } },
        'image-verify': {
          image: { registry: REGISTRY, repository: 'redis' },
          metrics: { image: { registry: REGISTRY, repository: 'redis-exporter' } },
        },
        web: { image: `${L}/web:2.0.0` },
      });
      expect(r.stderr).toContain('set global.security.allowInsecureImages=true');
      const out = await runCli(['render', '--chart', parent, '--registry', REGISTRY], { env: { HELM_BIN: helmBin } });
      expect(out.exitCode, out.stderr).toBe(0);
      expect([...out.stdout.matchAll(/^\s*image: (\S+)$/gm)].map((m) => m[1]).sort()).toEqual([
        `${L}/redis-exporter:1.67.0`,
        `${L}/redis:7.4.2`,
        `${L}/web:2.0.0`,
      ]);
    },
  );
});
