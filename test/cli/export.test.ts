// `export --format rendered` through the built CLI, no cluster: kustomize's own build of each
// release's overlay (the real kubectl) must equal, object for object, what `render` prints for
// the same inputs; base/ follows the vendor only and overlay/ the customer only; secrets stay in
// secrets/; bad input is refused with its exit code and leaves nothing behind.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { appDir, chartDir, helm3, kubectlBin, repoRoot, runCli, tempDir } from '../helpers.js';

const dir = tempDir('export');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const baseValues = join(appDir, 'values', 'base.yaml');
const customerValues = join(appDir, 'examples', 'customer-values.yaml');
const planDir = join(repoRoot, 'test', 'fixtures', 'release-plan');
const oci = ['--oci-repository', 'registry.local:5000/gitops/shop'];
const registry = ['--registry', 'registry.local:5000/shop', '--image-path', 'Promotion:spec.image'];

type Obj = { kind: string; metadata: { name: string; namespace?: string } };

/** Parsed the way kubectl reads YAML (1.1), keyed and sorted by kind/namespace/name. */
function objects(stream: string): [string, unknown][] {
  const list = parseAllDocuments(stream, { version: '1.1' })
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null && typeof o === 'object' && 'kind' in o);
  return list
    .map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, sortKeys(o)] as [string, unknown])
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

/**
 * render's objects as the export means them to come out: every CRD with Flux's prune switched
 * off (helm never deletes a CRD; src/export/README.md), nothing else changed.
 */
function asExported(stream: string): [string, unknown][] {
  return objects(stream).map(([key, o]) => {
    const crd = o as { kind: string; metadata: { annotations?: Record<string, string> } };
    if (crd.kind !== 'CustomResourceDefinition') return [key, o];
    const annotations = { ...crd.metadata.annotations, 'kustomize.toolkit.fluxcd.io/prune': 'disabled' };
    return [key, sortKeys({ ...crd, metadata: { ...crd.metadata, annotations } })];
  });
}

async function kustomize(folder: string): Promise<string> {
  return (await execa(kubectlBin, ['kustomize', folder])).stdout;
}

async function render(args: string[]): Promise<string> {
  const r = await runCli(['render', ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout;
}

async function exportTo(out: string, args: string[], env?: Record<string, string>): Promise<void> {
  const r = await runCli(['export', '--out', out, ...args], { env });
  expect(r.exitCode, r.stderr).toBe(0);
}

/** Every file under `root`, by relative path. */
function tree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else files.set(relative(root, p), readFileSync(p, 'utf8'));
    }
  };
  walk(root);
  return files;
}

const under = (files: Map<string, string>, prefix: string) => new Map([...files].filter(([p]) => p.startsWith(prefix)));

describe.each([
  ['without --registry', [] as string[]],
  ['with --registry', registry],
])('the bundled chart, %s', (_label, extra) => {
  const inputs = ['--chart', chartDir, '--base-values', baseValues, '-f', customerValues, ...extra];
  const out = join(dir, `app${extra.length}`);

  it("kubectl kustomize of the overlay equals render's output, object for object", async () => {
    const started = Date.now();
    await exportTo(out, [...inputs, ...oci]);
    process.stdout.write(
      `figure: export of the bundled chart ${_label}: ${Date.now() - started} ms (goal under 2 s)\n`,
    );
    const expected = asExported(await render(inputs));
    expect(expected.length).toBe(16);
    expect(objects(await kustomize(join(out, 'storefront', 'overlay')))).toEqual(expected);
  });

  it('writes secret values only to secrets/ (plain and base64)', () => {
    const files = tree(out);
    expect([...under(files, 'storefront/secrets/').keys()].sort()).toEqual([
      'storefront/secrets/kustomization.yaml',
      'storefront/secrets/secret-storefront-db.yaml',
      'storefront/secrets/secret-storefront-migrate.yaml',
    ]);
    for (const [path, content] of files) {
      if (path.startsWith('storefront/secrets/')) continue;
      expect(content, path).not.toContain('8vK#q2mZ!tR4wLp9');
      expect(content, path).not.toContain('OHZLI3EybVohdFI0d0xwOQ==');
    }
    expect(files.get('storefront/secrets/secret-storefront-db.yaml')).toContain('OHZLI3EybVohdFI0d0xwOQ==');
  });

  it('re-exporting the same inputs gives byte-identical files', async () => {
    const again = join(dir, `again${extra.length}`);
    await exportTo(again, [...inputs, ...oci]);
    expect(tree(again)).toEqual(tree(out));
  });
});

describe('base/ follows the vendor, overlay/ the customer', () => {
  const vendorDir = join(dir, 'vendor');
  const customerDir = join(dir, 'customer');
  mkdirSync(vendorDir, { recursive: true });
  mkdirSync(customerDir, { recursive: true });

  it('a customer value changes overlay/ only; a vendor value changes base/ only', async () => {
    const first = join(dir, 'first');
    await exportTo(first, ['--chart', chartDir, '--base-values', baseValues, '-f', customerValues, ...oci]);
    // The customer asks for 4 web replicas instead of 3.
    const customer2 = join(customerDir, 'customer.yaml');
    writeFileSync(customer2, readFileSync(customerValues, 'utf8').replace('replicaCount: 3', 'replicaCount: 4'));
    const second = join(dir, 'second');
    await exportTo(second, ['--chart', chartDir, '--base-values', baseValues, '-f', customer2, ...oci]);
    // The vendor moves the nightly report (no customer value touches it).
    const base2 = join(vendorDir, 'base.yaml');
    writeFileSync(base2, readFileSync(baseValues, 'utf8').replace('schedule: "30 2 * * *"', 'schedule: "45 3 * * *"'));
    const third = join(dir, 'third');
    await exportTo(third, ['--chart', chartDir, '--base-values', base2, '-f', customerValues, ...oci]);

    const [a, b, c] = [tree(first), tree(second), tree(third)];
    expect(under(b, 'storefront/base/')).toEqual(under(a, 'storefront/base/'));
    expect(under(b, 'storefront/overlay/')).not.toEqual(under(a, 'storefront/overlay/'));
    expect(b.get('storefront/overlay/patches/deployment-storefront-web.json')).toContain('"value": 4');
    expect(under(c, 'storefront/overlay/')).toEqual(under(a, 'storefront/overlay/'));
    expect(under(c, 'storefront/secrets/')).toEqual(under(a, 'storefront/secrets/'));
    const changed = [...under(c, 'storefront/base/')].filter(([p, content]) => a.get(p) !== content).map(([p]) => p);
    expect(changed).toEqual(['storefront/base/cronjob-storefront-report.yaml']);
  });
});

describe('objects the customer removes', () => {
  it('a CronJob the customer switches off is deleted by the overlay, still equal to render', async () => {
    const values = join(dir, 'no-report.yaml');
    writeFileSync(
      values,
      `${readFileSync(customerValues, 'utf8')}\nreport:\n  enabled: false\n`.replace(
        /\nreport:\n  recipients:[^]*?(?=\n\S|$)/,
        '',
      ),
    );
    const inputs = ['--chart', chartDir, '--base-values', baseValues, '-f', values];
    const out = join(dir, 'no-report');
    await exportTo(out, [...inputs, ...oci]);
    expect(readFileSync(join(out, 'storefront', 'overlay', 'kustomization.yaml'), 'utf8')).toContain(
      '  - patch: |\n      apiVersion: batch/v1\n      kind: CronJob\n      metadata:\n        name: storefront-report\n        namespace: default\n      $patch: delete\n',
    );
    const expected = asExported(await render(inputs));
    expect(expected.map(([k]) => k)).not.toContain('CronJob/default/storefront-report');
    expect(objects(await kustomize(join(out, 'storefront', 'overlay')))).toEqual(expected);
  });
});

/** A chart `name` of one ConfigMap template, with its values.yaml `defaults`; and a customer's values file beside it. */
function configMapChart(
  name: string,
  o: { defaults: string; template: string; customer: string },
): { chart: string; values: string } {
  const chart = join(dir, name);
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
  writeFileSync(join(chart, 'values.yaml'), o.defaults);
  writeFileSync(join(chart, 'templates', 'cm.yaml'), o.template);
  const values = join(dir, `${name}-values.yaml`);
  writeFileSync(values, o.customer);
  return { chart, values };
}

describe('a chart that needs a customer value (required) to render at all', () => {
  it("has an empty base and every object in its overlay in full, named in base/'s README", async () => {
    const { chart, values } = configMapChart('needy', {
      defaults: 'hostname: ""\n',
      template:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: needy\ndata:\n  host: {{ required "hostname is required" .Values.hostname | quote }}\n',
      customer: 'hostname: shop.example\n',
    });
    const out = join(dir, 'needy-out');
    await exportTo(out, ['--chart', chart, '-f', values, ...oci]);
    expect(readFileSync(join(out, 'needy', 'base', 'kustomization.yaml'), 'utf8')).toBe(
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
    );
    expect(readdirSync(join(out, 'needy', 'overlay')).sort()).toEqual([
      'README.md',
      'configmap-needy.yaml',
      'kustomization.yaml',
    ]);
    expect(readFileSync(join(out, 'needy', 'base', 'README.md'), 'utf8')).toMatch(
      /The chart does not render with the vendor's values alone \(.*hostname is required.*\): every object is in the overlay in full and base\/ is empty\./,
    );
    expect(objects(await kustomize(join(out, 'needy', 'overlay')))).toEqual(
      asExported(await render(['--chart', chart, '-f', values])),
    );
  });
});

/**
 * The release-plan fixture as a customer runs it, their report values in the folder `name`: the
 * plan's arguments, and each enabled release's own chart and values arguments (for render/values).
 */
function releasePlanRun(name: string): { planArgs: string[]; perRelease: Record<string, string[]> } {
  const customer = join(dir, name);
  mkdirSync(customer, { recursive: true });
  writeFileSync(join(customer, 'report.yaml'), 'message: bye\n');
  const planArgs = [
    '--app-dir',
    planDir,
    '--releases-file',
    join(planDir, 'releases.yaml'),
    '-n',
    'shop',
    '-f',
    customer,
    ...registry,
  ];
  return {
    planArgs,
    perRelease: {
      operator: ['--chart', join(planDir, 'charts', 'operator')],
      web: ['--chart', join(planDir, 'charts', 'part'), '--base-values', join(planDir, 'values', 'web.yaml')],
      report: ['--chart', join(planDir, 'charts', 'part'), '-f', join(customer, 'report.yaml')],
      cache: ['--chart', join(planDir, 'charts', 'part')],
    },
  };
}

describe('the release-plan fixture', () => {
  const { planArgs, perRelease: renderArgs } = releasePlanRun('plan-values');

  it("each enabled release's overlay equals render's output for it; Flux files in the plan's order", async () => {
    const out = join(dir, 'plan');
    await exportTo(out, planArgs);
    for (const [release, args] of Object.entries(renderArgs)) {
      const expected = asExported(await render([...args, '--release', release, '-n', 'shop', ...registry]));
      expect(objects(await kustomize(join(out, release, 'overlay'))), release).toEqual(expected);
    }
    const flux = parseAllDocuments(readFileSync(join(out, 'flux', 'kustomizations.yaml'), 'utf8')).map(
      (d) => d.toJS() as { metadata: { name: string }; spec: Record<string, unknown> },
    );
    expect(
      flux.map((k) => [
        k.metadata.name,
        k.spec.path,
        k.spec.dependsOn ?? [],
        k.spec.targetNamespace,
        k.spec.prune,
        k.spec.wait,
        k.spec.timeout,
      ]),
    ).toEqual([
      ['operator', './operator/overlay', [], 'shop', true, true, '10m'],
      ['web', './web/overlay', [{ name: 'operator' }], 'shop', true, true, '10m'],
      ['report', './report/overlay', [{ name: 'web' }], 'shop', true, true, '10m'],
      ['cache', './cache/overlay', [], 'shop', true, true, '10m'],
    ]);
    expect(readFileSync(join(out, 'flux', 'source.yaml'), 'utf8')).toContain(
      'url: oci://registry.local:5000/shop/plan-test-export\n',
    );
    // flux/ applies itself (root.yaml), so a Kustomization a later export drops is deleted and pruned.
    expect(readFileSync(join(out, 'flux', 'kustomization.yaml'), 'utf8')).toBe(
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - source.yaml\n  - root.yaml\n  - kustomizations.yaml\n',
    );
    expect(parseAllDocuments(readFileSync(join(out, 'flux', 'root.yaml'), 'utf8'))[0]!.toJS()).toEqual({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'plan-test-flux', namespace: 'flux-system' },
      spec: {
        interval: '10m',
        path: './flux',
        sourceRef: { kind: 'OCIRepository', name: 'plan-test' },
        prune: true,
        wait: false,
      },
    });
    // The customer's message for report is its overlay's only patch.
    expect(
      JSON.parse(readFileSync(join(out, 'report', 'overlay', 'patches', 'configmap-report-settings.json'), 'utf8')),
    ).toEqual([{ op: 'replace', path: '/data/message', value: 'bye' }]);
  });

  it('a release its `enabled` turns off is not exported; --flux-namespace places every Flux object', async () => {
    const out = join(dir, 'plan-no-cache');
    await exportTo(out, [...planArgs, '--flux-namespace', 'gitops'], { PLAN_TEST_CACHE: 'false' });
    const flux = ['source.yaml', 'root.yaml', 'kustomizations.yaml'].flatMap((f) =>
      parseAllDocuments(readFileSync(join(out, 'flux', f), 'utf8')).map(
        (d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string } },
      ),
    );
    expect(flux.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'OCIRepository gitops/plan-test',
      'Kustomization gitops/plan-test-flux',
      'Kustomization gitops/operator',
      'Kustomization gitops/web',
      'Kustomization gitops/report',
    ]);
    expect(readdirSync(out).sort()).toEqual([
      '.helm-installer-export',
      'README.md',
      'flux',
      'operator',
      'report',
      'web',
    ]);
  });
});

describe('bad input', () => {
  const inputs = ['--chart', chartDir, '--base-values', baseValues, '-f', customerValues, ...oci];

  it('a non-empty --out is refused (exit 2) and kept; --force writes beside the files it did not write, which stay', async () => {
    const out = join(dir, 'taken');
    mkdirSync(out);
    writeFileSync(join(out, 'keep.txt'), 'mine\n');
    const r = await runCli(['export', '--out', out, ...inputs]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--out ${out} exists and is not empty`);
    expect(readdirSync(out)).toEqual(['keep.txt']);
    await exportTo(out, [...inputs, '--force']);
    expect(readdirSync(out).sort()).toEqual(['.helm-installer-export', 'README.md', 'flux', 'keep.txt', 'storefront']);
    expect(readFileSync(join(out, 'keep.txt'), 'utf8')).toBe('mine\n');
    // The manifest lists what the export wrote, and only that.
    const listed = readFileSync(join(out, '.helm-installer-export'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    expect(listed).toEqual(
      [...tree(out).keys()].filter((p) => p !== 'keep.txt' && p !== '.helm-installer-export').sort(),
    );
  });

  it('an --out that cannot be created is named (exit 2)', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const out = join(file, 'sub', 'out');
    const r = await runCli(['export', '--out', out, ...inputs]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--out ${out} cannot be created: ENOTDIR`);
  });

  it('no --oci-repository and no --registry: exit 2 naming both', async () => {
    const r = await runCli(['export', '--out', join(dir, 'no-oci'), '--chart', chartDir]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('--oci-repository (HELM_INSTALLER_OCI_REPOSITORY) is not set, nor --registry');
  });

  it('a secret value that would sit in a ConfigMap is named (exit 3) and nothing is written', async () => {
    const { chart, values } = configMapChart('leaky', {
      defaults: 'apiToken: ""\n',
      template:
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leaky-settings\ndata:\n  token: {{ .Values.apiToken | quote }}\n',
      customer: 'apiToken: tok-9f8e7d6c5b\n',
    });
    const out = join(dir, 'leaky-out');
    const r = await runCli(['export', '--out', out, '--chart', chart, '-f', values, ...oci]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('leaky: ConfigMap/leaky-settings /data/token');
    expect(r.stderr).not.toContain('tok-9f8e7d6c5b');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dirname(out)).filter((n) => n.includes('leaky-out'))).toEqual([]);
  });
});

// --- The HelmRelease form (`--format helmrelease`) ---

type Flux = {
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
};
const readYaml = (file: string) => parseAllDocuments(readFileSync(file, 'utf8'), { version: '1.1' })[0]!.toJS() as Flux;
const isPlainMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** helm's merge of -f files, as Flux's valuesFrom does it: maps merge, anything else replaces. */
function mergeValues(into: Record<string, unknown>, layer: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(layer))
    into[k] = isPlainMap(v) && isPlainMap(into[k]) ? mergeValues(into[k] as Record<string, unknown>, v) : v;
  return into;
}

/** The values the HelmRelease of `folder` gives helm: its valuesFrom read from the folder's files, merged in order. */
function helmReleaseValues(folder: string): Record<string, unknown> {
  const objects = readdirSync(folder)
    .filter((f) => f.startsWith('values-'))
    .map((f) => readYaml(join(folder, f)));
  const byName = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
  const release = readYaml(join(folder, 'helmrelease.yaml'));
  const merged: Record<string, unknown> = {};
  for (const ref of release.spec.valuesFrom as Array<{ kind: string; name: string; valuesKey: string }>) {
    const source = byName.get(`${ref.kind}/${ref.name}`)!;
    const text = (source.data ?? source.stringData)![ref.valuesKey]!;
    mergeValues(merged, parseAllDocuments(text, { version: '1.1' })[0]!.toJS() as Record<string, unknown>);
  }
  return merged;
}

async function valuesOf(args: string[]): Promise<unknown> {
  const r = await runCli(['values', '--show-secrets', '-o', 'json', ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** The file names under `root`, relative and sorted (chart archives are binary: names only). */
function paths(root: string): string[] {
  const found: string[] = [];
  const walk = (d: string) =>
    readdirSync(d).forEach((n) =>
      statSync(join(d, n)).isDirectory() ? walk(join(d, n)) : found.push(relative(root, join(d, n))),
    );
  walk(root);
  return found.sort();
}

describe('--format helmrelease, the bundled chart', () => {
  const inputs = [
    '--chart',
    chartDir,
    '--base-values',
    baseValues,
    '-f',
    customerValues,
    '--set',
    'web.replicaCount=4',
    ...registry,
  ];
  const install = [
    '--drift',
    'warn',
    '--test',
    '--test-failure',
    'keep',
    '--history-max',
    '3',
    '--take-ownership',
    'always',
    '--crds',
    'create',
    '--image-pull-secret',
    'regcred',
    '--app-slug',
    'shop',
  ];
  const out = join(dir, 'hr-app');

  it('writes one folder with the Flux objects, the values layers, the Secret and the chart archive', async () => {
    const started = Date.now();
    await exportTo(out, ['--format', 'helmrelease', ...inputs, ...install]);
    process.stdout.write(`figure: export --format helmrelease of the bundled chart: ${Date.now() - started} ms\n`);
    expect(paths(out)).toEqual([
      '.helm-installer-export',
      'README.md',
      'kustomization.yaml',
      'storefront/chart/storefront-1.4.0.tgz',
      'storefront/helmrelease.yaml',
      'storefront/kustomization.yaml',
      'storefront/ocirepository.yaml',
      'storefront/values-customer.yaml',
      'storefront/values-generated.yaml',
      'storefront/values-secret.yaml',
      'storefront/values-vendor.yaml',
    ]);
    // The archive is the chart itself (helm package rewrites Chart.yaml; the rest as written).
    const valuesYaml = await execa(
      'tar',
      ['-xzOf', join(out, 'storefront', 'chart', 'storefront-1.4.0.tgz'), 'storefront/values.yaml'],
      { stripFinalNewline: false },
    );
    expect(valuesYaml.stdout).toBe(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  });

  it("merged in valuesFrom's order, the layers equal what `values` prints for the same inputs", async () => {
    expect(helmReleaseValues(join(out, 'storefront'))).toEqual(await valuesOf(inputs));
  });

  it('a --set that sets what a registry hint sets wins, as helm applies --set last', async () => {
    const collide = [...inputs, '--set', 'web.image.registry=mirror.example.com'];
    const other = join(dir, 'hr-app-set');
    await exportTo(other, ['--format', 'helmrelease', ...collide]);
    const merged = helmReleaseValues(join(other, 'storefront')) as { web: { image: unknown } };
    expect(merged.web.image).toEqual({ registry: 'mirror.example.com', repository: 'storefront-web' });
    expect(merged).toEqual(await valuesOf(collide));
  });

  it("says what install's options would do: drift, test, history, ownership, CRDs, chart source", () => {
    const spec = readYaml(join(out, 'storefront', 'helmrelease.yaml')).spec;
    expect(spec.driftDetection).toEqual({ mode: 'warn' });
    expect(spec.test).toEqual({ enable: true, timeout: '5m', ignoreFailures: true });
    expect(spec.maxHistory).toBe(3);
    expect(spec.upgrade).toEqual({
      crds: 'Create',
      remediation: { retries: 0, remediateLastFailure: true, strategy: 'rollback' },
    });
    expect((spec.install as { crds?: string }).crds).toBe('Create');
    expect(spec.commonMetadata).toEqual({ annotations: { 'kots.io/app-slug': 'shop' } });
    expect([spec.releaseName, spec.targetNamespace, spec.storageNamespace, spec.dependsOn]).toEqual([
      'storefront',
      'default',
      'default',
      undefined,
    ]);
    const source = readYaml(join(out, 'storefront', 'ocirepository.yaml')).spec;
    expect([source.url, source.ref]).toEqual(['oci://registry.local:5000/shop/charts/storefront', { tag: '1.4.0' }]);
  });

  it('writes secret values only to the Secret manifest (mode 0600)', () => {
    const files = tree(out);
    for (const [path, content] of files) {
      if (path === 'storefront/values-secret.yaml' || path.endsWith('.tgz')) continue;
      expect(content, path).not.toContain('8vK#q2mZ!tR4wLp9');
      expect(content, path).not.toContain('OHZLI3EybVohdFI0d0xwOQ==');
    }
    expect(readYaml(join(out, 'storefront', 'values-secret.yaml')).stringData).toEqual({
      'customer.yaml': 'database:\n  password: 8vK#q2mZ!tR4wLp9\n',
    });
    expect(statSync(join(out, 'storefront', 'values-secret.yaml')).mode & 0o777).toBe(0o600);
  });

  it('re-exporting the same inputs gives byte-identical files, chart archives aside', async () => {
    const again = join(dir, 'hr-app-again');
    await exportTo(again, ['--format', 'helmrelease', ...inputs, ...install]);
    const noArchives = (files: Map<string, string>) => new Map([...files].filter(([p]) => !p.endsWith('.tgz')));
    expect(noArchives(tree(again))).toEqual(noArchives(tree(out)));
  });

  it('with helm 3 (the version we stay compatible with): the same files, and a chart archive of the chart', async () => {
    const helm3Out = join(dir, 'hr-app-helm3');
    await exportTo(helm3Out, ['--format', 'helmrelease', ...inputs, ...install, '--helm-bin', helm3]);
    const noArchives = (files: Map<string, string>) => new Map([...files].filter(([p]) => !p.endsWith('.tgz')));
    expect(noArchives(tree(helm3Out))).toEqual(noArchives(tree(out)));
    const valuesYaml = await execa(
      'tar',
      ['-xzOf', join(helm3Out, 'storefront', 'chart', 'storefront-1.4.0.tgz'), 'storefront/values.yaml'],
      { stripFinalNewline: false },
    );
    expect(valuesYaml.stdout).toBe(readFileSync(join(chartDir, 'values.yaml'), 'utf8'));
  });

  it("names, in the README, the reference kustomize's images cannot rewrite", () => {
    expect(readFileSync(join(out, 'README.md'), 'utf8')).toContain(
      '- image quay.io/acme-shop/promo-banner:1.2.0 -> registry.local:5000/shop/promo-banner:1.2.0 in Promotion/default/storefront-welcome spec.image: not rewritten',
    );
  });
});

describe('--format helmrelease, the release-plan fixture', () => {
  const { planArgs, perRelease: valuesArgs } = releasePlanRun('hr-plan-values');
  const out = join(dir, 'hr-plan');

  it('a folder per enabled release, dependsOn from the plan, values equal to `values` for each', async () => {
    await exportTo(out, ['--format', 'helmrelease', ...planArgs]);
    const perRelease = (r: string, chart: string) => [
      `${r}/chart/${chart}-0.1.0.tgz`,
      `${r}/helmrelease.yaml`,
      `${r}/kustomization.yaml`,
      `${r}/ocirepository.yaml`,
      `${r}/values-customer.yaml`,
      `${r}/values-generated.yaml`,
      `${r}/values-vendor.yaml`,
    ];
    expect(paths(out)).toEqual([
      '.helm-installer-export',
      'README.md',
      ...perRelease('cache', 'part'),
      'kustomization.yaml',
      ...perRelease('operator', 'operator'),
      ...perRelease('report', 'part'),
      ...perRelease('web', 'part'),
    ]);
    const dependsOn = Object.keys(valuesArgs).map((r) => [
      r,
      readYaml(join(out, r, 'helmrelease.yaml')).spec.dependsOn ?? [],
    ]);
    expect(dependsOn).toEqual([
      ['operator', []],
      ['web', [{ name: 'operator', namespace: 'flux-system' }]],
      ['report', [{ name: 'web', namespace: 'flux-system' }]],
      ['cache', []],
    ]);
    for (const [release, args] of Object.entries(valuesArgs)) {
      expect(helmReleaseValues(join(out, release)), release).toEqual(
        await valuesOf([...args, '--release', release, '-n', 'shop', ...registry]),
      );
    }
    expect((readYaml(join(out, 'kustomization.yaml')) as unknown as { resources: string[] }).resources).toEqual([
      'operator',
      'web',
      'report',
      'cache',
    ]);
  });
});

describe('--format helmrelease, bad input', () => {
  it('no --registry: exit 2 naming the flag, nothing written', async () => {
    const out = join(dir, 'hr-no-registry');
    const r = await runCli(['export', '--format', 'helmrelease', '--out', out, '--chart', chartDir, ...oci]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'export --format helmrelease needs the registry the charts are pushed to: --registry (HELM_INSTALLER_REGISTRY) is not set',
    );
    expect(existsSync(out)).toBe(false);
  });

  it('a timeout Flux cannot write is named (exit 3) and nothing is written', async () => {
    const out = join(dir, 'hr-bad-timeout');
    const r = await runCli([
      'export',
      '--format',
      'helmrelease',
      '--out',
      out,
      '--chart',
      chartDir,
      '--registry',
      'registry.local:5000/shop',
      '--timeout',
      '10m500us',
    ]);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(
      'release default/storefront: --timeout "10m500us" cannot be written in a HelmRelease (Flux takes durations in h, m, s or ms)',
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dirname(out)).filter((n) => n.includes('hr-bad-timeout'))).toEqual([]);
  });
});
