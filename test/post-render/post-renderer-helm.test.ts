// The post-renderer against the real pinned helm 3 and helm 4, through `helm template`: helm runs
// the sh shim, and this process (the test's, as the installer's in a run) does the rewrite.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { collectImages } from '../../src/images/manifest-images.js';
import { parseRegistryAddress } from '../../src/common/image-reference.js';
import { preparePostRenderer } from '../../src/post-render/post-renderer-setup.js';
import { parseStream } from '../images/manifest-fixtures.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

const ROOT = resolve(import.meta.dirname, '../..');
const HELM = {
  3: join(ROOT, 'node_modules/.helm-installer/helm3'),
  4: join(ROOT, 'node_modules/.helm-installer/helm4'),
} as const;
const L = 'registry.local:5000/app';

let tmp: string;
let chart: string;

async function writeChart(dir: string, deploymentImage: string): Promise<void> {
  await mkdir(join(dir, 'templates'), { recursive: true });
  await writeFile(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: demo\nversion: 0.1.0\n');
  await writeFile(join(dir, 'values.yaml'), `web:\n  image: ${deploymentImage}\n`);
  await writeFile(
    join(dir, 'templates/deployment.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      initContainers:
        - name: init
          image: busybox:1.36
      containers:
        - name: web
          image: {{ .Values.web.image | quote }}
          env:
            - name: FLAG
              value: "yes"
`,
  );
  await writeFile(
    join(dir, 'templates/hook.yaml'),
    `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: quay.io/acme/migrate:2.0
`,
  );
  await writeFile(
    join(dir, 'templates/cronjob.yaml'),
    `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
            - name: backup
              image: ghcr.io/acme/backup:3
`,
  );
}

async function helmTemplate(major: 3 | 4, chartDir: string, workDir: string) {
  const setup = await preparePostRenderer({
    workDir,
    helm: helmTraits(major),
    plan: { registry: parseRegistryAddress(L), extraPaths: [], imagePullSecret: 'regcred' },
  });
  const result = await execa(HELM[major], ['template', 'demo', chartDir, ...setup.helmArgs], {
    reject: false,
    env: {
      ...setup.env,
      // Keep helm's own state in the test dir; helm 4 needs a writable cache to load any plugin.
      HELM_CACHE_HOME: join(workDir, 'cache'),
      HELM_CONFIG_HOME: join(workDir, 'config'),
      HELM_DATA_HOME: join(workDir, 'data'),
    },
  }).finally(setup.dispose);
  return { result, setup };
}

/** The post-renderer's work dir, without the helm homes helmTemplate puts there. */
function workFiles(workDir: string): string[] {
  return readdirSync(workDir)
    .filter((f) => !['cache', 'config', 'data'].includes(f))
    .sort();
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'post-renderer-helm-'));
  chart = join(tmp, 'chart');
  await writeChart(chart, 'nginx:1.27');
});
afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe.each([4, 3] as const)('helm %i template with our post-renderer', (major) => {
  it('rewrites the images of the Deployment and the CronJob and adds the pull secret', async () => {
    const { result, setup } = await helmTemplate(major, chart, join(tmp, `ok-${major}`));
    expect(result.exitCode, result.stderr).toBe(0);
    const byName = Object.fromEntries(collectImages(result.stdout).map((o) => [`${o.name}/${o.path}`, o.image]));
    expect(byName).toMatchObject({
      'web/spec.template.spec.initContainers[0].image': `${L}/busybox:1.36`,
      'web/spec.template.spec.containers[0].image': `${L}/nginx:1.27`,
      'nightly/spec.jobTemplate.spec.template.spec.containers[0].image': `${L}/backup:3`,
    });
    // Helm 4 sends hooks through the post-renderer; helm 3 never does, so a helm 3 install
    // pulls hook images from where the chart says.
    expect(byName['migrate/spec.template.spec.containers[0].image']).toBe(
      major === 4 ? `${L}/migrate:2.0` : 'quay.io/acme/migrate:2.0',
    );
    const docs = parseStream(result.stdout) as Array<{ kind: string; spec: Record<string, any> } | null>;
    const deployment = docs.find((d) => d?.kind === 'Deployment')!;
    expect(deployment.spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(deployment.spec.template.spec.containers[0].env).toEqual([{ name: 'FLAG', value: 'yes' }]);

    const reports = setup.reports;
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report?.ok).toBe(true);
    if (report?.ok) {
      expect(report.rewrites.map((r) => r.to).sort()).toEqual(
        [`${L}/backup:3`, `${L}/busybox:1.36`, `${L}/nginx:1.27`, ...(major === 4 ? [`${L}/migrate:2.0`] : [])].sort(),
      );
      expect(report.rewrites.find((r) => r.name === 'web')?.source).toBe('demo/templates/deployment.yaml');
      expect(report.images).toEqual({ occurrences: major === 4 ? 4 : 3, distinct: major === 4 ? 4 : 3 });
    }
    // Nothing of the request (helm's stream) nor of the rewrite's spill is left in the work dir.
    expect(workFiles(join(tmp, `ok-${major}`))).toEqual(
      major === 4 ? ['plugins', 'post-render.sh', 'requests'] : ['post-render.sh', 'requests'],
    );
  });

  it('fails the render with the cause in the report when an image is invalid', async () => {
    const bad = join(tmp, `bad-chart-${major}`);
    await writeChart(bad, 'Acme/Web:1');
    const { result, setup } = await helmTemplate(major, bad, join(tmp, `bad-${major}`));
    expect(result.exitCode).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      major === 4 ? /plugin "helm-installer-images" exited with error/ : /Invalid image reference/,
    );
    expect(setup.reports).toMatchObject([
      {
        ok: false,
        error: { message: expect.stringMatching(/"Acme\/Web:1".*lowercase/), file: 'demo/templates/deployment.yaml' },
      },
    ]);
    // What withRenderSetup throws instead of helm's own failure.
    expect(setup.failure()).toMatchObject({ exitCode: 3, file: 'demo/templates/deployment.yaml' });
    expect(workFiles(join(tmp, `bad-${major}`))).toEqual(
      major === 4 ? ['plugins', 'post-render.sh', 'requests'] : ['post-render.sh', 'requests'],
    );
  });
});
