// `images -- <helm flags>` and `render -- <helm flags>` through the built CLI and the real helm 4
// and helm 3: every helm template of the run sees the given Capabilities. The fixture charts pick
// images by .Capabilities.KubeVersion (a kubeVersion constraint and semverCompare, as longhorn
// does) and by .Capabilities.APIVersions.Has; the expected images are written here from them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm3, helm4, repoRoot, runCli } from '../helpers.js';

const charts = join(repoRoot, 'test/fixtures/charts');
const R = 'registry.local:5000/acme';
const RESIZER_NEW = 'registry.k8s.io/sig-storage/csi-resizer:v1.13.1';
const RESIZER_OLD = 'registry.k8s.io/sig-storage/csi-resizer:v1.9.4';
const SNAPSHOTTER_NEW = 'registry.k8s.io/sig-storage/csi-snapshotter:v8.2.0';
const SNAPSHOTTER_OLD = 'registry.k8s.io/sig-storage/csi-snapshotter:v7.0.2';
const DRIVER = 'docker.io/longhornio/longhorn-manager:v1.8.0';
const NGINX = 'docker.io/library/nginx:1.27.3';
const BUSYBOX = 'docker.io/library/busybox:1.37.0';
const KUBECTL = 'docker.io/bitnami/kubectl:1.31.4';
const EXPORTER = 'docker.io/nginx/nginx-prometheus-exporter:1.4.0';

// What each helm assumes without --kube-version (helm 3.17: v1.32.0, helm 4.1: v1.35.0).
const HELMS = [
  { name: 'helm 4', bin: helm4, defaults: [DRIVER, RESIZER_NEW, SNAPSHOTTER_NEW] },
  { name: 'helm 3', bin: helm3, defaults: [DRIVER, RESIZER_OLD, SNAPSHOTTER_OLD] },
];

const lines = (s: string) => s.trim().split('\n');
/** Every `image:` value of a rendered stream, read by a pattern of this file. */
const imagesIn = (stream: string) =>
  [...stream.matchAll(/^\s*(?:- )?image: "?([^"\s]+)"?\s*$/gm)].map((m) => m[1]!).sort();

describe.each(HELMS)('render and images with helm flags after -- ($name)', ({ bin, defaults }) => {
  // The command, then --helm-bin, then the rest (whatever follows `--` goes to helm).
  const run = ([command, ...args]: string[], env: Record<string, string> = {}) =>
    runCli([command!, '--helm-bin', bin, ...args], { env });
  const kubeChart = ['--chart', join(charts, 'kube-version-gated')];
  const apiChart = ['--chart', join(charts, 'api-versions-gated')];

  it('images follows --kube-version: semverCompare on .Capabilities.KubeVersion picks the images', async () => {
    const plain = await run(['images', ...kubeChart]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(lines(plain.stdout)).toEqual(defaults);
    const old = await run(['images', ...kubeChart, '--', '--kube-version', '1.31']);
    expect(old.exitCode, old.stderr).toBe(0);
    expect(lines(old.stdout)).toEqual([DRIVER, RESIZER_OLD, SNAPSHOTTER_OLD]);
    const cluster = await run(['images', ...kubeChart, '--', '--kube-version=v1.34.4']);
    expect(lines(cluster.stdout)).toEqual([DRIVER, RESIZER_NEW, SNAPSHOTTER_OLD]);
    // The Job's way: the same flags from HELM_INSTALLER_HELM_ARGS.
    const fromEnv = await run(['images', ...kubeChart, '--registry', R], {
      HELM_INSTALLER_HELM_ARGS: '--kube-version v1.34.4',
    });
    expect(fromEnv.exitCode, fromEnv.stderr).toBe(0);
    expect(lines(fromEnv.stdout)).toEqual([
      `${R}/csi-resizer:v1.13.1`,
      `${R}/csi-snapshotter:v7.0.2`,
      `${R}/longhorn-manager:v1.8.0`,
    ]);
  });

  it("a version below the chart's kubeVersion is refused by helm: exit 3 naming the constraint and --kube-version", async () => {
    const r = await run(['images', ...kubeChart, '--', '--kube-version', '1.29']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toMatch(/chart requires kubeVersion: >=1\.30\.0-0 which is incompatible with Kubernetes v1\.29/);
    expect(r.stderr).toMatch(/-- --kube-version 1\.34/);
  });

  it('images and render follow --api-versions: gated objects and their images appear', async () => {
    const plain = await run(['images', ...apiChart]);
    expect(lines(plain.stdout)).toEqual([BUSYBOX, NGINX]);
    const gated = ['--', '--api-versions', 'monitoring.coreos.com/v1', '-a', 'batch/v1/CronJob'];
    const withApis = await run(['images', ...apiChart, ...gated]);
    expect(withApis.exitCode, withApis.stderr).toBe(0);
    expect(lines(withApis.stdout)).toEqual([KUBECTL, NGINX, EXPORTER]);

    const render = await run(['render', ...apiChart, '--registry', R, ...gated]);
    expect(render.exitCode, render.stderr).toBe(0);
    expect(render.stdout).toMatch(/^kind: ServiceMonitor$/m);
    expect(render.stdout).toMatch(/^kind: CronJob$/m);
    expect(imagesIn(render.stdout)).toEqual([
      `${R}/kubectl:1.31.4`,
      `${R}/nginx-prometheus-exporter:1.4.0`,
      `${R}/nginx:1.27.3`,
    ]);
  });

  it('render --registry rewrites the images the given version selects, and only those', async () => {
    const r = await run([
      'render',
      ...kubeChart,
      '--registry',
      R,
      '--log-format',
      'pretty',
      '--',
      '--kube-version',
      '1.31',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(imagesIn(r.stdout)).toEqual([
      `${R}/csi-resizer:v1.9.4`,
      `${R}/csi-snapshotter:v7.0.2`,
      `${R}/longhorn-manager:v1.8.0`,
    ]);
    // The hinted render saw the same version as the plan's: the hints were kept, not refused as changing images.
    expect(r.stderr).toContain('registry hints applied');
    expect(r.stderr).not.toContain('registry hints would change');
    const plain = await run(['render', ...kubeChart]);
    expect(imagesIn(plain.stdout)).toEqual(defaults);
  });

  it('flags that cannot work are exit 2 naming the flag, before helm runs', async () => {
    const second = await run(['render', ...kubeChart, '--', '--post-renderer', '/bin/cat']);
    expect(second.exitCode).toBe(2);
    expect(second.stderr).toContain('helm flag --post-renderer cannot be used with render or images');
    const outDir = await run(['images', ...kubeChart], { HELM_INSTALLER_HELM_ARGS: '--output-dir /tmp/out' });
    expect(outDir.exitCode).toBe(2);
    expect(outDir.stderr).toContain(
      'invalid HELM_INSTALLER_HELM_ARGS="--output-dir /tmp/out": helm flag --output-dir cannot be used',
    );
  });
});

describe('install with helm arguments that cannot work (no cluster needed: refused first)', () => {
  it('a --post-renderer that would replace the image rewrite, and --kube-version, are exit 2 naming the flag', async () => {
    const rewrite = await runCli(['install', '--registry', R, '--', '--post-renderer', '/bin/cat']);
    expect(rewrite.exitCode).toBe(2);
    expect(rewrite.stderr).toContain(
      'helm flag --post-renderer cannot be passed to install with --registry or --image-pull-secret',
    );
    const kube = await runCli(['install'], { env: { HELM_INSTALLER_HELM_ARGS: '--kube-version 1.31' } });
    expect(kube.exitCode).toBe(2);
    expect(kube.stderr).toContain('helm flag --kube-version cannot be passed to install');
  });
});
