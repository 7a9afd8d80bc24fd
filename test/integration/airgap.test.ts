// Airgap end to end: a real registry (Debian's docker-registry behind htpasswd) holding the
// images the installer lists, then an install with --registry on the control plane, after which
// every pod spec in the cluster points at the local registry and carries the pull secret. And
// the preflight: an image missing from the registry stops the install before helm starts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { createNamespace, getJson, kubectl } from '../cluster/kube.js';
import { chartDir, helm4, runCli, tempDir } from '../helpers.js';
import { pushTestImage, startRegistry, type TestRegistry } from '../images/registry.js';
import { history, install, kinds, kubeconfig } from './cluster-helpers.js';

const creds = { user: 'kots', password: 'Airgap-Pa55' };
let registry: TestRegistry;
let address: string;
let digestSet: string;
const dir = tempDir('airgap');
const dockerConfig = join(dir, 'dockerconfig.json');
const opts = () => ({ kubeconfig: kubeconfig() });

beforeAll(async () => {
  registry = await startRegistry({ htpasswd: creds });
  address = `${registry.host}/acme`;
  writeFileSync(
    dockerConfig,
    JSON.stringify({
      auths: { [registry.host]: { auth: Buffer.from(`${creds.user}:${creds.password}`).toString('base64') } },
    }),
  );
  // The CronJob's image is pinned by digest; pin it to the digest of what we push.
  const digest = await pushTestImage(registry, 'acme/alpine', 'pinned', creds);
  digestSet = `report.image.digest=${digest}`;
});

afterAll(async () => {
  await registry?.stop();
});

/** What `images --registry` says the registry must hold, pushed like KOTS pushes the bundle. */
async function pushEverything(): Promise<string[]> {
  const r = await runCli([
    'images',
    '--chart',
    chartDir,
    '--registry',
    address,
    '--image-path',
    'Promotion:spec.image',
    '--set',
    digestSet,
  ]);
  expect(r.exitCode, r.stderr).toBe(0);
  const images = r.stdout.trim().split('\n');
  for (const image of images) {
    const m = /^[^/]+\/(.+?)(?::([^:@/]+))?(?:@sha256:[0-9a-f]+)?$/.exec(image)!;
    if (m[2]) await pushTestImage(registry, m[1]!, m[2], creds);
  }
  return images;
}

function podSpecsOf(obj: any): { where: string; spec: any }[] {
  const name = `${obj.kind}/${obj.metadata.name}`;
  if (obj.kind === 'Pod') return [{ where: name, spec: obj.spec }];
  if (obj.kind === 'CronJob') return [{ where: name, spec: obj.spec.jobTemplate.spec.template.spec }];
  if (obj.spec?.template?.spec) return [{ where: name, spec: obj.spec.template.spec }];
  return [];
}

function expectLocal(where: string, spec: any) {
  const containers = [...(spec.initContainers ?? []), ...spec.containers, ...(spec.ephemeralContainers ?? [])];
  for (const c of containers)
    expect(c.image, `${where} ${c.name}`).toMatch(new RegExp(`^${address.replace(/\./g, '\\.')}/`));
  expect(
    (spec.imagePullSecrets ?? []).map((s: { name: string }) => s.name),
    where,
  ).toContain('regcred');
}

describe('airgap install', () => {
  it('every pod spec in the cluster, hooks and CronJob included, points at the local registry with the pull secret', async () => {
    const images = await pushEverything();
    expect(images).toHaveLength(8);
    const ns = await createNamespace('airgap', opts());
    await kubectl(
      [
        'create',
        'secret',
        'docker-registry',
        'regcred',
        `--docker-server=${registry.host}`,
        `--docker-username=${creds.user}`,
        `--docker-password=${creds.password}`,
      ],
      { ...opts(), namespace: ns },
    );

    const r = await install('storefront', ns, [
      '--registry',
      address,
      '--image-pull-secret',
      'regcred',
      '--pull-secret-file',
      dockerConfig,
      '--image-path',
      'Promotion:spec.image',
      '--set',
      digestSet,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"msg":"registry preflight"/);
    expect(r.stdout + r.stderr).not.toContain(creds.password);

    const specs = [];
    for (const kind of ['pods', 'deployments', 'statefulsets', 'cronjobs', 'jobs', 'replicasets']) {
      for (const obj of await kinds(ns, kind)) specs.push(...podSpecsOf({ ...obj, kind: obj.kind ?? kind }));
    }
    // The hook Job is deleted once it succeeds; helm keeps what it applied in the release.
    const hooks = await execa(helm4, ['get', 'hooks', 'storefront', '--namespace', ns], {
      env: { KUBECONFIG: kubeconfig() },
    });
    const hookObjects = parseAllDocuments(hooks.stdout)
      .map((d) => d.toJS())
      .filter(Boolean);
    const hookJobs = hookObjects.filter((o: any) => o.kind === 'Job');
    expect(hookJobs.map((j: any) => j.metadata.name)).toEqual(['storefront-migrate']);
    for (const j of hookJobs) specs.push(...podSpecsOf(j));

    const where = specs.map((s) => s.where);
    expect(where).toEqual(
      expect.arrayContaining([
        'Deployment/storefront-web',
        'StatefulSet/storefront-db',
        'CronJob/storefront-report',
        'Job/storefront-migrate',
        'Deployment/storefront-cache',
      ]),
    );
    expect(where.filter((w) => w.startsWith('Pod/')).length).toBeGreaterThanOrEqual(3);
    for (const s of specs) expectLocal(s.where, s.spec);

    const promotion = await getJson(['get', 'promotions', 'storefront-welcome'], { namespace: ns, ...opts() });
    expect(promotion.spec.image).toBe(`${address}/promo-banner:1.2.0`);
    expect(await history('storefront', ns)).toMatchObject([{ revision: 1, status: 'deployed' }]);
  });

  it('an image missing from the registry fails the preflight with exit 6 and the list, before helm starts', async () => {
    const empty = await startRegistry();
    try {
      await pushTestImage(empty, 'acme/busybox', '1.36.1');
      const ns = await createNamespace('airgap-missing', opts());
      const started = Date.now();
      const r = await install('storefront', ns, [
        '--registry',
        `${empty.host}/acme`,
        '--image-path',
        'Promotion:spec.image',
      ]);
      const seconds = (Date.now() - started) / 1000;
      expect(r.exitCode, r.stderr).toBe(6);
      expect(r.stderr).toMatch(/7 of 8 images are missing from the registry/);
      expect(r.stderr).toContain(`${empty.host}/acme/storefront-web:2.3.1`);
      expect(r.stderr).not.toContain(`${empty.host}/acme/busybox:1.36.1 (`);
      expect(r.stderr).toMatch(/next: Push the airgap bundle/);
      expect(await history('storefront', ns)).toEqual([]);
      expect(await kinds(ns, 'deployments')).toEqual([]);
      process.stderr.write(`[figure] preflight failure reported in ${seconds.toFixed(1)}s\n`);
      // A registry that refuses HEAD: --skip-preflight lets the install go on (KWOK pulls nothing).
      const skipped = await install('storefront', ns, [
        '--registry',
        `${empty.host}/acme`,
        '--image-path',
        'Promotion:spec.image',
        '--skip-preflight',
      ]);
      expect(skipped.exitCode, skipped.stderr).toBe(0);
      expect(skipped.stdout).not.toMatch(/"msg":"registry preflight"/);
      const web = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, ...opts() });
      expect(web.spec.template.spec.containers[0].image).toBe(`${empty.host}/acme/storefront-web:2.3.1`);
    } finally {
      await empty.stop();
    }
  });
});
