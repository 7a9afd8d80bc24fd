// The bundled demo chart (app/storefront) is the fixture of every other test and of the demo:
// these tests pin the properties the others rely on, rendered by the real pinned helm binaries
// (v4, the one we ship, and v3, the one we stay compatible with). No cluster needed.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const chart = join(root, 'app', 'storefront');
const baseValues = join(root, 'app', 'values', 'base.yaml');
const customerValues = join(root, 'app', 'examples', 'customer-values.yaml');
const helmBinaries = {
  helm4: join(root, 'node_modules', '.helm-installer', 'helm4'),
  helm3: join(root, 'node_modules', '.helm-installer', 'helm3'),
} as const;
type HelmName = keyof typeof helmBinaries;

const HOOK_JOB = 'storefront-migrate';
const INIT_IMAGE = 'busybox:1.36.1';
const DIGEST_IMAGE = 'docker.io/library/alpine@sha256:beefdbd8a1da6d2915566fde36db9db0b524eb737fc57cd1367effd16dc0d06d';
const CACHE_IMAGES = ['docker.io/redis:7.2.5-alpine', 'quay.io/oliver006/redis_exporter:v1.62.0'];
/** Every image the chart renders with its defaults, pod images and the Promotion's spec.image. */
const DEFAULT_IMAGES = [
  ...CACHE_IMAGES,
  INIT_IMAGE,
  'ghcr.io/acme-shop/storefront-web:2.3.1',
  'postgres:16.4',
  DIGEST_IMAGE,
  'ghcr.io/acme-shop/storefront-migrations:2.3.1',
  'quay.io/acme-shop/promo-banner:1.2.0',
].sort();

interface Container {
  name: string;
  image: string;
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  nodeSelector?: Record<string, string>;
  imagePullSecrets?: { name: string }[];
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}
interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  // The rest of a manifest, read by the individual tests.
  spec?: any;
  data?: Record<string, string>;
}

interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

function helm(name: HelmName, args: string[]): HelmResult {
  try {
    const stdout = execFileSync(helmBinaries[name], args, {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status?: number | null; stdout?: string; stderr?: string };
    return { code: e.status ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `helm template` with the vendor's base values (and the customer's, unless told not to). */
function render(name: HelmName, extra: string[] = [], withCustomer = true): K8sObject[] {
  const args = ['template', 'storefront', chart, '--namespace', 'shop', '-f', baseValues];
  if (withCustomer) args.push('-f', customerValues);
  const result = helm(name, [...args, ...extra]);
  if (result.code !== 0) throw new Error(`helm template failed (${result.code}): ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) {
    throw new Error(`no ${kind} ${name}; rendered: ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  }
  return found;
}

/** The pod template of a workload object (undefined for anything else). */
function podTemplate(o: K8sObject): PodTemplate | undefined {
  switch (o.kind) {
    case 'Deployment':
    case 'StatefulSet':
    case 'DaemonSet':
    case 'ReplicaSet':
    case 'Job':
      return o.spec.template as PodTemplate;
    case 'CronJob':
      return o.spec.jobTemplate.spec.template as PodTemplate;
    case 'Pod':
      return { metadata: o.metadata, spec: o.spec as PodSpec };
    default:
      return undefined;
  }
}

function podImages(objects: K8sObject[]): string[] {
  return objects.flatMap((o) => {
    const pod = podTemplate(o);
    return pod ? [...(pod.spec.initContainers ?? []), ...pod.spec.containers].map((c) => c.image) : [];
  });
}

function allImages(objects: K8sObject[]): string[] {
  const promotions = objects.filter((o) => o.kind === 'Promotion').map((o) => o.spec.image as string);
  return [...new Set([...podImages(objects), ...promotions])].sort();
}

describe.each(['helm4', 'helm3'] as const)('the storefront chart with %s', (name) => {
  it('lints cleanly with the vendor base values, and with the customer values in strict mode', () => {
    const lint = helm(name, ['lint', chart, '-f', baseValues]);
    expect(lint.stderr).toBe('');
    expect(lint.code).toBe(0);
    expect(lint.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');

    const strict = helm(name, ['lint', '--strict', chart, '-f', baseValues, '-f', customerValues]);
    expect(strict.code).toBe(0);
    expect(strict.stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
  });

  it('renders every part: web, database, migration hook, report, custom resource, cache', () => {
    const objects = render(name);

    const web = find(objects, 'Deployment', 'storefront-web');
    expect(web.spec.replicas).toBe(3); // customer value over the base value 2
    const webContainer = web.spec.template.spec.containers[0];
    expect(webContainer.readinessProbe.httpGet.path).toBe('/healthz/ready');
    expect(webContainer.resources.requests).toEqual({ cpu: '250m', memory: '384Mi' }); // from base.yaml
    expect(web.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(webContainer.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(webContainer.envFrom).toContainEqual({ configMapRef: { name: 'storefront-web' } });

    const config = find(objects, 'ConfigMap', 'storefront-web');
    expect(config.data?.STOREFRONT_PUBLIC_URL).toBe('http://shop.customer.example');
    expect(config.data?.STOREFRONT_CACHE_URL).toBe('redis://storefront-cache:6379/0');
    expect(find(objects, 'Service', 'storefront-web').spec.ports[0].port).toBe(80);
    expect(find(objects, 'Ingress', 'storefront-web').spec.rules[0].host).toBe('shop.customer.example');

    const db = find(objects, 'StatefulSet', 'storefront-db');
    expect(db.spec.serviceName).toBe('storefront-db');
    expect(db.spec.volumeClaimTemplates).toHaveLength(1);
    const claim = db.spec.volumeClaimTemplates[0];
    expect(claim.spec.resources.requests.storage).toBe('20Gi'); // base.yaml
    expect(claim.spec).not.toHaveProperty('storageClassName'); // empty: the cluster's default class
    expect(find(objects, 'Service', 'storefront-db').spec.clusterIP).toBe('None');

    const secret = find(objects, 'Secret', 'storefront-db');
    expect(Buffer.from(secret.data?.password ?? '', 'base64').toString()).toBe('8vK#q2mZ!tR4wLp9');
    expect(secret.metadata.annotations?.['helm.sh/hook']).toBeUndefined(); // a release resource
    const dbEnv = db.spec.template.spec.containers[0].env as { name: string; valueFrom?: unknown }[];
    expect(dbEnv.find((e) => e.name === 'POSTGRES_PASSWORD')?.valueFrom).toEqual({
      secretKeyRef: { name: 'storefront-db', key: 'password' },
    });

    const job = find(objects, 'Job', HOOK_JOB);
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-weight': '5',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(job.spec.backoffLimit).toBeLessThanOrEqual(2);
    expect(job.spec.activeDeadlineSeconds).toBe(900); // base.yaml
    // The password the hook reads exists before the release's own Secret does.
    const hookSecret = find(objects, 'Secret', HOOK_JOB);
    expect(hookSecret.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(hookSecret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(5);

    const cron = find(objects, 'CronJob', 'storefront-report');
    expect(cron.spec.schedule).toBe('30 2 * * *');
    expect(cron.spec.timeZone).toBe('Etc/UTC');

    const promotion = find(objects, 'Promotion', 'storefront-welcome');
    expect(promotion.apiVersion).toBe('storefront.example.com/v1alpha1');
    expect(promotion.spec.image).toBe('quay.io/acme-shop/promo-banner:1.2.0');

    expect(find(objects, 'Deployment', 'storefront-cache').spec.template.spec.containers).toHaveLength(2);
  });

  it('keeps the CRD in crds/: not rendered as a template, added only by --include-crds', () => {
    expect(readdirSync(join(chart, 'crds'))).toEqual(['promotions.storefront.example.com.yaml']);
    expect(render(name).filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);

    const crd = find(render(name, ['--include-crds']), 'CustomResourceDefinition', 'promotions.storefront.example.com');
    const version = crd.spec.versions[0];
    expect(version.schema.openAPIV3Schema.properties.spec.properties.image.type).toBe('string');
    expect(crd.spec.names.kind).toBe('Promotion');
  });

  it('renders exactly the expected images, each workload with at least one', () => {
    const objects = render(name, [], false);
    for (const o of objects) {
      const pod = podTemplate(o);
      if (!pod) continue;
      expect(pod.spec.containers.length, `${o.kind}/${o.metadata.name}`).toBeGreaterThan(0);
      for (const c of [...(pod.spec.initContainers ?? []), ...pod.spec.containers]) {
        expect(c.image, `${o.kind}/${o.metadata.name} container ${c.name}`).toMatch(/\S/);
      }
    }
    expect(new Set(objects.filter((o) => podTemplate(o)).map((o) => o.kind))).toEqual(
      new Set(['Deployment', 'StatefulSet', 'CronJob', 'Job']),
    );
    expect(allImages(objects)).toEqual(DEFAULT_IMAGES);
  });

  it('hard-codes the init container image, so global.imageRegistry does not move it', () => {
    const objects = render(name, ['--set', 'global.imageRegistry=registry.local:5000/app']);
    const pod = podTemplate(find(objects, 'Deployment', 'storefront-web'))!;
    expect(pod.spec.initContainers?.map((c) => c.image)).toEqual([INIT_IMAGE]);
    expect(pod.spec.containers[0]?.image).toBe('registry.local:5000/app/acme-shop/storefront-web:2.3.1');
    // The digest survives a registry change; the vendored cache subchart ignores the global.
    expect(allImages(objects)).toEqual(
      [
        ...CACHE_IMAGES,
        INIT_IMAGE,
        'registry.local:5000/app/acme-shop/storefront-web:2.3.1',
        'registry.local:5000/app/postgres:16.4',
        'registry.local:5000/app/library/alpine@sha256:beefdbd8a1da6d2915566fde36db9db0b524eb737fc57cd1367effd16dc0d06d',
        'registry.local:5000/app/acme-shop/storefront-migrations:2.3.1',
        'registry.local:5000/app/acme-shop/promo-banner:1.2.0',
      ].sort(),
    );
  });

  it('pins the report image by digest', () => {
    const pod = podTemplate(find(render(name), 'CronJob', 'storefront-report'))!;
    expect(pod.spec.containers.map((c) => c.image)).toEqual([DIGEST_IMAGE]);
  });

  it('drops the cache subchart and its images with cache.enabled=false', () => {
    const objects = render(name, ['--set', 'cache.enabled=false']);
    const images = allImages(objects);
    for (const image of CACHE_IMAGES) expect(images).not.toContain(image);
    expect(objects.filter((o) => o.metadata.name === 'storefront-cache')).toEqual([]);
    expect(find(objects, 'ConfigMap', 'storefront-web').data?.STOREFRONT_CACHE_URL).toBe('');
    expect(images).toEqual(DEFAULT_IMAGES.filter((i) => !CACHE_IMAGES.includes(i)));
  });

  it('puts per-component scheduling, annotations and pull secrets into the pod templates', () => {
    const objects = render(name, [
      '--set',
      'web.nodeSelector.storefront-test/pool=nowhere',
      '--set-string',
      'web.podAnnotations.test/web=yes',
      '--set',
      'web.podLabels.team=shop',
      '--set',
      'database.nodeSelector.storefront-test/pool=db',
      '--set-string',
      'database.podAnnotations.test/db=yes',
      '--set',
      'migrations.nodeSelector.storefront-test/pool=jobs',
      '--set-string',
      'migrations.podAnnotations.test/fail=true',
      '--set',
      'migrations.activeDeadlineSeconds=30',
      '--set',
      'report.nodeSelector.storefront-test/pool=report',
      '--set-string',
      'report.podAnnotations.test/report=yes',
      '--set',
      'cache.nodeSelector.storefront-test/pool=cache',
      '--set-string',
      'cache.podAnnotations.test/cache=yes',
      '--set',
      'global.imagePullSecrets[0]=regcred',
      '--set',
      'global.imagePullSecrets[1].name=mirror',
    ]);
    const expectPod = (kind: string, objectName: string, pool: string, annotation: string): PodTemplate => {
      const pod = podTemplate(find(objects, kind, objectName))!;
      expect(pod.spec.nodeSelector).toEqual({ 'storefront-test/pool': pool });
      expect(pod.metadata?.annotations?.[annotation]).toBeDefined();
      return pod;
    };
    const web = expectPod('Deployment', 'storefront-web', 'nowhere', 'test/web');
    expect(web.metadata?.labels?.team).toBe('shop');
    expect(web.metadata?.annotations?.['checksum/config']).toMatch(/^[a-f0-9]{64}$/);
    expectPod('StatefulSet', 'storefront-db', 'db', 'test/db');
    const hook = expectPod('Job', HOOK_JOB, 'jobs', 'test/fail');
    expect(hook.metadata?.annotations?.['test/fail']).toBe('true');
    expect(find(objects, 'Job', HOOK_JOB).spec.activeDeadlineSeconds).toBe(30);
    expectPod('CronJob', 'storefront-report', 'report', 'test/report');
    expectPod('Deployment', 'storefront-cache', 'cache', 'test/cache');

    const workloads = objects.filter((o) => podTemplate(o));
    expect(workloads).toHaveLength(5);
    for (const o of workloads) {
      expect(podTemplate(o)!.spec.imagePullSecrets, `${o.kind}/${o.metadata.name}`).toEqual([
        { name: 'regcred' },
        { name: 'mirror' },
      ]);
    }
  });

  it('keeps the database on an emptyDir and creates no claim with database.storage.enabled=false', () => {
    const db = find(render(name, ['--set', 'database.storage.enabled=false']), 'StatefulSet', 'storefront-db');
    expect(db.spec).not.toHaveProperty('volumeClaimTemplates');
    expect(db.spec.template.spec.volumes).toContainEqual({ name: 'data', emptyDir: {} });
    const mounts = db.spec.template.spec.containers[0].volumeMounts.map((m: { name: string }) => m.name);
    expect(mounts).toContain('data');
  });

  it('uses database.existingSecret instead of creating Secrets, and a storage class when given', () => {
    const objects = render(name, [
      '--set',
      'database.existingSecret=customer-db',
      '--set',
      'database.storage.storageClassName=fast-ssd',
    ]);
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    const refs = objects
      .flatMap((o) => podTemplate(o)?.spec.containers ?? [])
      .flatMap((c) => (c as { env?: { valueFrom?: { secretKeyRef?: { name: string } } }[] }).env ?? [])
      .flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
    expect(new Set(refs)).toEqual(new Set(['customer-db']));
    expect(refs.length).toBe(3); // web, database, migrations
    const claim = find(objects, 'StatefulSet', 'storefront-db').spec.volumeClaimTemplates[0];
    expect(claim.spec.storageClassName).toBe('fast-ssd');
  });

  it.each([
    ['web.replicaCount=notanumber', /web[./]replicaCount/, /integer/],
    ['web.service.port=http', /web[./]service[./]port/, /integer/],
    ['database.storage.size=20', /database[./]storage[./]size/, /string/],
    ['cache.replicaCount=many', /replicaCount/, /integer/],
  ])('rejects --set %s through values.schema.json, naming the key', (assignment, key, type) => {
    const result = helm(name, ['template', 'storefront', chart, '-f', baseValues, '--set', assignment]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("values don't meet the specifications of the schema(s)");
    expect(result.stderr).toMatch(key);
    expect(result.stderr).toMatch(type);
  });

  it('refuses clusters older than the chart kubeVersion', () => {
    const result = helm(name, ['template', 'storefront', chart, '--kube-version', '1.26.9']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('chart requires kubeVersion: >=1.27.0-0');
  });
});

describe('the bundled app directory', () => {
  it('holds the two charts of its release plan, beside vendor values and examples that are not charts', () => {
    const charts = readdirSync(join(root, 'app'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(root, 'app', e.name, 'Chart.yaml')))
      .map((e) => e.name);
    expect(charts).toEqual(['promotions-operator', 'storefront']);
    expect(existsSync(join(root, 'app', 'releases.yaml'))).toBe(true);
    expect(existsSync(baseValues)).toBe(true);
    expect(existsSync(customerValues)).toBe(true);
  });

  // The release plan (app/releases.yaml) installs the storefront without its cache subchart and
  // the cache chart on its own, under the name the web pods are given.
  it.each(Object.keys(helmBinaries) as HelmName[])(
    'splits the cache out of the storefront in the release plan (%s)',
    (name) => {
      const plan = (release: string, dir: string, ...values: string[]) => {
        const r = helm(name, [
          'template',
          release,
          join(root, 'app', dir),
          ...values.flatMap((v) => ['-f', join(root, 'app', v)]),
        ]);
        expect(r.stderr).toBe('');
        return parseAllDocuments(r.stdout)
          .map((d) => d.toJS() as K8sObject | null)
          .filter((o): o is K8sObject => o !== null)
          .map((o) => `${o.kind}/${o.metadata.name}`)
          .sort();
      };
      const storefront = plan('storefront', 'storefront', 'values/base.yaml', 'plan/storefront.yaml');
      expect(storefront.filter((x) => x.includes('cache'))).toEqual([]);
      expect(plan('storefront-cache', 'storefront/charts/cache', 'plan/cache.yaml')).toEqual([
        'ConfigMap/storefront-cache',
        'Deployment/storefront-cache',
        'Service/storefront-cache',
      ]);
      expect(plan('promotions-operator', 'promotions-operator')).toEqual(['Deployment/promotions-operator']);
      const web = helm(name, [
        'template',
        'storefront',
        chart,
        '-f',
        baseValues,
        '-f',
        join(root, 'app', 'plan', 'storefront.yaml'),
      ]);
      expect(web.stdout).toContain('STOREFRONT_CACHE_URL: "redis://storefront-cache:6379/0"');
    },
  );

  it("keeps the operator's CRD the same as the storefront chart's own copy", () => {
    const crd = (dir: string) =>
      parseAllDocuments(
        readFileSync(join(root, 'app', dir, 'crds', 'promotions.storefront.example.com.yaml'), 'utf8'),
      ).map((d) => d.toJS());
    expect(crd('promotions-operator')).toEqual(crd('storefront'));
  });

  it('renders the same manifests with helm 4 and helm 3', () => {
    expect(render('helm4')).toEqual(render('helm3'));
  });
});
