// The HelmRelease form of `export` (issue 23 item 1): a pure writer, checked against YAML written
// out by hand, and the secret split checked by merging the files back as Flux and helm merge.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { InvalidInputError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { helmReleaseFiles } from '../../src/export/helmrelease/helmrelease-files.js';
import type { HelmReleaseInput, HelmReleaseOptions } from '../../src/export/helmrelease/input.js';
import { secretValuePaths, splitValues } from '../../src/export/helmrelease/values-split.js';
import { SecretRegistry } from '../../src/common/secrets.js';

const options: HelmReleaseOptions = { registry: { address: '127.0.0.1:5000/shop', insecure: true } };

function shop(): HelmReleaseInput {
  return {
    release: 'shop',
    namespace: 'store',
    chart: { name: 'storefront', version: '1.4.2' },
    dependsOn: [{ release: 'db', namespace: 'store-data' }],
    timeout: '10m',
    historyMax: 5,
    takeOwnership: 'first-install',
    crds: 'create-replace',
    values: {
      vendor: { replicas: 2, ingress: { enabled: false } },
      customer: {
        replicas: 3,
        ingress: { enabled: true, host: 'shop.example.com' },
        db: { user: 'shop', password: 's3cret-pass' },
      },
    },
    secretPaths: [['db', 'password']],
    drift: { mode: 'warn', ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment', name: 'web' } }] },
    test: { enabled: true, timeout: '3m', failure: 'rollback' },
    images: [
      {
        from: 'nginx:1.27',
        to: '127.0.0.1:5000/shop/nginx:1.27',
        kind: 'Deployment',
        name: 'web',
        namespace: 'store',
        path: 'spec.template.spec.containers[0].image',
      },
      {
        from: 'busybox:1.36',
        to: '127.0.0.1:5000/shop/busybox:1.36',
        kind: 'Deployment',
        name: 'web',
        namespace: 'store',
        path: 'spec.template.spec.containers[0].env[0].value',
        via: 'env HELPER_IMAGE',
      },
    ],
  };
}

function db(): HelmReleaseInput {
  return {
    release: 'db',
    namespace: 'store-data',
    chart: { name: 'postgres', version: '16.1.0+build.7' },
    dependsOn: [],
    timeout: '5m',
    historyMax: 0,
    takeOwnership: 'first-install',
    crds: 'create-replace',
    values: { vendor: {}, customer: {} },
    secretPaths: [],
    drift: { mode: 'correct', ignore: [] },
    test: { enabled: false, timeout: '5m', failure: 'rollback' },
    images: [],
  };
}

const fileOf = (files: { path: string; content: string }[], path: string) =>
  files.find((f) => f.path === path)?.content;

describe('helmReleaseFiles', () => {
  const { files, notes } = helmReleaseFiles([shop(), db()], options);

  it('writes a folder per release: source, HelmRelease, values, and a kustomization listing them', () => {
    expect(files.map((f) => `${f.path}${f.secret ? ' (secret)' : ''}`)).toEqual([
      'shop/ocirepository.yaml',
      'shop/helmrelease.yaml',
      'shop/values-vendor.yaml',
      'shop/values-customer.yaml',
      'shop/values-secret.yaml (secret)',
      'shop/kustomization.yaml',
      'db/ocirepository.yaml',
      'db/helmrelease.yaml',
      'db/values-vendor.yaml',
      'db/values-customer.yaml',
      'db/kustomization.yaml',
    ]);
  });

  it('points the OCIRepository at the chart helm push writes to the registry', () => {
    expect(fileOf(files, 'shop/ocirepository.yaml')).toBe(`apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: shop
  namespace: flux-system
spec:
  interval: 10m
  url: oci://127.0.0.1:5000/shop/charts/storefront
  ref:
    tag: 1.4.2
  layerSelector:
    mediaType: application/vnd.cncf.helm.chart.content.v1.tar+gzip
    operation: copy
  insecure: true
`);
    // helm push writes a version's "+" as "_" in the tag.
    expect(parse(fileOf(files, 'db/ocirepository.yaml')!).spec.ref).toEqual({ tag: '16.1.0_build.7' });
  });

  it('writes the HelmRelease: remediation as our install does, drift, test, values in order, the container image', () => {
    expect(fileOf(files, 'shop/helmrelease.yaml')).toBe(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: shop
  namespace: flux-system
spec:
  interval: 10m
  chartRef:
    kind: OCIRepository
    name: shop
    namespace: flux-system
  releaseName: shop
  targetNamespace: store
  storageNamespace: store
  dependsOn:
    - name: db
      namespace: flux-system
  timeout: 10m
  maxHistory: 5
  install:
    createNamespace: true
    crds: CreateReplace
    remediation:
      retries: 0
      remediateLastFailure: true
  upgrade:
    crds: CreateReplace
    disableTakeOwnership: true
    remediation:
      retries: 0
      remediateLastFailure: true
      strategy: rollback
  test:
    enable: true
    timeout: 3m
  driftDetection:
    mode: warn
    ignore:
      - paths:
          - /spec/replicas
        target:
          kind: Deployment
          name: web
  valuesFrom:
    - kind: ConfigMap
      name: shop-vendor-values
      valuesKey: values.yaml
    - kind: ConfigMap
      name: shop-customer-values
      valuesKey: values.yaml
    - kind: Secret
      name: shop-secret-values
      valuesKey: customer.yaml
  postRenderers:
    - kustomize:
        images:
          - name: nginx
            newName: 127.0.0.1:5000/shop/nginx
`);
  });

  it('keeps the vendor values, the customer values and the secret one apart', () => {
    expect(fileOf(files, 'shop/values-vendor.yaml')).toBe(`apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-vendor-values
  namespace: flux-system
data:
  values.yaml: |
    replicas: 2
    ingress:
      enabled: false
`);
    expect(fileOf(files, 'shop/values-customer.yaml')).toBe(`apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-customer-values
  namespace: flux-system
data:
  values.yaml: |
    replicas: 3
    ingress:
      enabled: true
      host: shop.example.com
    db:
      user: shop
`);
    expect(fileOf(files, 'shop/values-secret.yaml')).toBe(`apiVersion: v1
kind: Secret
metadata:
  name: shop-secret-values
  namespace: flux-system
type: Opaque
stringData:
  customer.yaml: |
    db:
      password: s3cret-pass
`);
    expect(fileOf(files, 'shop/kustomization.yaml')).toBe(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ocirepository.yaml
  - helmrelease.yaml
  - values-vendor.yaml
  - values-customer.yaml
  - values-secret.yaml
`);
  });

  it('writes a release without tests, with drift correction and empty values', () => {
    const spec = parse(fileOf(files, 'db/helmrelease.yaml')!).spec;
    expect(spec.test).toBeUndefined();
    expect(spec.dependsOn).toBeUndefined();
    expect(spec.postRenderers).toBeUndefined();
    expect(spec.driftDetection).toEqual({ mode: 'enabled' });
    expect(spec.maxHistory).toBe(0);
    expect(spec.valuesFrom).toEqual([
      { kind: 'ConfigMap', name: 'db-vendor-values', valuesKey: 'values.yaml' },
      { kind: 'ConfigMap', name: 'db-customer-values', valuesKey: 'values.yaml' },
    ]);
    expect(parse(fileOf(files, 'db/values-customer.yaml')!).data).toEqual({ 'values.yaml': '{}\n' });
  });

  it('names what it cannot express: the env-value reference, and ignored fields kept through upgrades', () => {
    expect(notes).toEqual([
      {
        release: 'store/shop',
        what: "image busybox:1.36 -> 127.0.0.1:5000/shop/busybox:1.36 in Deployment/store/web spec.template.spec.containers[0].env[0].value (env HELPER_IMAGE): not rewritten (kustomize's images only rewrite containers' image fields); set it through the chart's values or a postRenderers patch",
      },
      {
        release: 'store/shop',
        what: 'drift ignore rules: Flux only leaves the fields out of its drift check; our install also keeps their live values through every upgrade, Flux sets them to what the chart renders at each upgrade',
      },
    ]);
  });

  it('gives the same text for the same input', () => {
    expect(helmReleaseFiles([shop(), db()], options)).toEqual({ files, notes });
  });
});

describe('the secret split', () => {
  const secrets = new SecretRegistry();
  const vendor = { auth: { enabled: true, rootPassword: 'vendor-root-pw' }, image: { tag: '2.0' } };
  const customer = {
    auth: { rootPassword: 'customer-root-pw' },
    users: [
      { name: 'alice', password: 'alice-pw-123' },
      { name: 'bob', password: 'bob-pw-456' },
    ],
    dsn: 'postgres://shop:customer-root-pw@db:5432/shop',
    region: 'eu-west-1',
  };
  secrets.collectFrom(vendor);
  secrets.collectFrom(customer);
  const secretPaths = [...secretValuePaths(vendor, secrets), ...secretValuePaths(customer, secrets)];
  const input: HelmReleaseInput = {
    ...db(),
    release: 'kv',
    namespace: 'kv',
    values: { vendor, customer },
    secretPaths,
  };
  const { files } = helmReleaseFiles([input], options);
  const secretLiterals = ['vendor-root-pw', 'customer-root-pw', 'alice-pw-123', 'bob-pw-456'];

  it('finds the secret values as the logs mask them: by key, in lists, and inside a longer string', () => {
    expect(secretPaths).toEqual([
      ['auth', 'rootPassword'],
      ['auth', 'rootPassword'],
      ['users', 0, 'password'],
      ['users', 1, 'password'],
      ['dsn'],
    ]);
  });

  it('writes no secret value in any file but the Secret manifest', () => {
    const secretFiles = files.filter((f) => f.secret);
    expect(secretFiles.map((f) => f.path)).toEqual(['kv/values-secret.yaml']);
    for (const f of files.filter((x) => !x.secret))
      for (const s of secretLiterals) expect(f.content, f.path).not.toContain(s);
    for (const s of secretLiterals) expect(secretFiles[0]!.content).toContain(s);
  });

  it('moves a list holding a secret whole, and keeps the rest readable', () => {
    const customerMap = parse(parse(fileOf(files, 'kv/values-customer.yaml')!).data['values.yaml']);
    expect(customerMap).toEqual({ region: 'eu-west-1' });
    const secret = parse(fileOf(files, 'kv/values-secret.yaml')!).stringData;
    expect(parse(secret['vendor.yaml'])).toEqual({ auth: { rootPassword: 'vendor-root-pw' } });
    expect(parse(secret['customer.yaml'])).toEqual({
      auth: { rootPassword: 'customer-root-pw' },
      users: [
        { name: 'alice', password: 'alice-pw-123' },
        { name: 'bob', password: 'bob-pw-456' },
      ],
      dsn: 'postgres://shop:customer-root-pw@db:5432/shop',
    });
  });

  it('merged back in valuesFrom order, gives the values our layering gives', () => {
    const release = parse(fileOf(files, 'kv/helmrelease.yaml')!);
    const byRef = (ref: { kind: string; name: string; valuesKey: string }) => {
      const object = files
        .map((f) => parse(f.content))
        .find((o) => o.kind === ref.kind && o.metadata?.name === ref.name);
      return parse((ref.kind === 'Secret' ? object.stringData : object.data)[ref.valuesKey]);
    };
    const merged = release.spec.valuesFrom.map(byRef).reduce(mergeLikeHelm, {});
    expect(merged).toEqual({
      auth: { enabled: true, rootPassword: 'customer-root-pw' },
      image: { tag: '2.0' },
      users: [
        { name: 'alice', password: 'alice-pw-123' },
        { name: 'bob', password: 'bob-pw-456' },
      ],
      dsn: 'postgres://shop:customer-root-pw@db:5432/shop',
      region: 'eu-west-1',
    });
  });

  it('leaves a layer without the secret path as it is', () => {
    expect(splitValues({ a: 'x', db: 'plain' }, [['db', 'password']])).toEqual({
      plain: { a: 'x', db: 'plain' },
      secret: {},
    });
  });
});

/** helm's merge of `-f` files (and Flux's of valuesFrom): maps deeply, anything else replaced. */
function mergeLikeHelm(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    const isMap = (x: unknown): x is Record<string, unknown> =>
      x !== null && typeof x === 'object' && !Array.isArray(x);
    out[k] = isMap(b) && isMap(v) ? mergeLikeHelm(b, v) : v;
  }
  return out;
}

describe('what the form says differently', () => {
  it('maps --test-failure keep to ignoreFailures, and --take-ownership never/always', () => {
    const keep = helmReleaseFiles(
      [{ ...db(), test: { enabled: true, timeout: '90s', failure: 'keep' }, takeOwnership: 'never' }],
      options,
    );
    const spec = parse(fileOf(keep.files, 'db/helmrelease.yaml')!).spec;
    expect(spec.test).toEqual({ enable: true, timeout: '90s', ignoreFailures: true });
    expect(spec.install.disableTakeOwnership).toBe(true);
    expect(spec.upgrade.disableTakeOwnership).toBe(true);
    const always = parse(
      fileOf(helmReleaseFiles([{ ...db(), takeOwnership: 'always' }], options).files, 'db/helmrelease.yaml')!,
    ).spec;
    expect(always.install.disableTakeOwnership).toBeUndefined();
    expect(always.upgrade.disableTakeOwnership).toBeUndefined();
  });

  it('translates ignore rules: "*" is a field left out, and a kind not written as the API writes it is named', () => {
    const ignore = [
      { paths: ['/metadata/annotations/example.com~1x'] },
      { paths: ['/spec/replicas', '/spec/template/metadata/annotations'], target: { kind: '*', name: 'web' } },
      { paths: ['/data'], target: { kind: 'configmap', namespace: 'store', name: '*' } },
    ];
    const out = helmReleaseFiles([{ ...db(), drift: { mode: 'off', ignore } }], options);
    expect(parse(fileOf(out.files, 'db/helmrelease.yaml')!).spec.driftDetection).toEqual({
      mode: 'disabled',
      ignore: [
        { paths: ['/metadata/annotations/example.com~1x'] },
        { paths: ['/spec/replicas', '/spec/template/metadata/annotations'], target: { name: 'web' } },
        { paths: ['/data'], target: { kind: 'configmap', namespace: 'store' } },
      ],
    });
    expect(out.notes.map((n) => n.what)).toContain(
      'drift ignore rule for kind "configmap": Flux matches the kind as written (case counts): write it as the API names it, e.g. Deployment',
    );
  });

  it('sets a new tag when the rewrite changes it, and names references of one name that go to two places', () => {
    const at = (i: number) => ({
      kind: 'Deployment',
      name: `w${i}`,
      path: 'spec.template.spec.initContainers[0].image',
    });
    const images = [
      { from: 'redis@sha256:' + 'a'.repeat(64), to: 'reg.local/app/redis@sha256:' + 'a'.repeat(64), ...at(1) },
      { from: 'quay.io/org/tool:v1', to: 'reg.local/app/tool:v1-airgap', ...at(2) },
      { from: 'alpine:3.20', to: 'reg.local/app/alpine:3.20', ...at(3) },
      { from: 'alpine:3.19', to: 'reg.local/other/alpine:3.19', ...at(4) },
      {
        from: 'ghcr.io/org/job:1',
        to: 'reg.local/app/job:1',
        kind: 'Workflow',
        name: 'w5',
        path: 'spec.templates[0].container.image',
      },
    ];
    const out = helmReleaseFiles([{ ...db(), images }], options);
    expect(parse(fileOf(out.files, 'db/helmrelease.yaml')!).spec.postRenderers).toEqual([
      {
        kustomize: {
          images: [
            { name: 'quay.io/org/tool', newName: 'reg.local/app/tool', newTag: 'v1-airgap' },
            { name: 'redis', newName: 'reg.local/app/redis' },
          ],
        },
      },
    ]);
    expect(out.notes.map((n) => n.what)).toEqual([
      "image ghcr.io/org/job:1 -> reg.local/app/job:1 in Workflow/w5 spec.templates[0].container.image: not rewritten (kustomize's images only rewrite containers' image fields); set it through the chart's values or a postRenderers patch",
      'image alpine:3.20 -> reg.local/app/alpine:3.20 in Deployment/w3 spec.template.spec.initContainers[0].image: not rewritten (another reference named alpine goes elsewhere, and kustomize rewrites by name)',
      'image alpine:3.19 -> reg.local/other/alpine:3.19 in Deployment/w4 spec.template.spec.initContainers[0].image: not rewritten (another reference named alpine goes elsewhere, and kustomize rewrites by name)',
    ]);
  });

  it('adds the image pull secret by a strategic merge patch per built-in kind with a pod spec', () => {
    const out = helmReleaseFiles([{ ...db(), imagePullSecret: 'regcred' }], options);
    const patches = parse(fileOf(out.files, 'db/helmrelease.yaml')!).spec.postRenderers[0].kustomize.patches;
    expect(patches.map((p: { target: unknown }) => p.target)).toEqual(
      ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'CronJob', 'Pod'].map((kind) => ({ kind })),
    );
    expect(patches[5].patch).toBe(`apiVersion: batch/v1
kind: CronJob
metadata:
  name: image-pull-secret
spec:
  jobTemplate:
    spec:
      template:
        spec:
          imagePullSecrets:
            - name: regcred
`);
    expect(patches[6].patch).toBe(
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: image-pull-secret\nspec:\n  imagePullSecrets:\n    - name: regcred\n',
    );
    expect(out.notes.map((n) => n.what)).toEqual([
      'image pull secret regcred: added to the pod specs of Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod; pod specs inside other kinds (custom resources) do not get it',
    ]);
  });

  it('sets the KOTS app slug annotation on every object through commonMetadata', () => {
    const out = helmReleaseFiles([{ ...db(), appSlug: 'storefront' }], options);
    expect(parse(fileOf(out.files, 'db/helmrelease.yaml')!).spec.commonMetadata).toEqual({
      annotations: { 'kots.io/app-slug': 'storefront' },
    });
  });

  it("names two releases of one name by their namespace, and a Flux namespace and interval of the caller's choice", () => {
    const out = helmReleaseFiles([db(), { ...db(), namespace: 'store-copy' }], {
      ...options,
      namespace: 'gitops',
      interval: '1h',
    });
    expect(out.files.filter((f) => f.path.endsWith('helmrelease.yaml')).map((f) => f.path)).toEqual([
      'store-data-db/helmrelease.yaml',
      'store-copy-db/helmrelease.yaml',
    ]);
    const release = parse(fileOf(out.files, 'store-copy-db/helmrelease.yaml')!);
    expect(release.metadata).toEqual({ name: 'store-copy-db', namespace: 'gitops' });
    expect(release.spec.releaseName).toBe('db');
    expect(release.spec.interval).toBe('1h');
    expect(release.spec.valuesFrom[0]).toEqual({
      kind: 'ConfigMap',
      name: 'store-copy-db-vendor-values',
      valuesKey: 'values.yaml',
    });
  });

  it('quotes strings (and keys: "n" is false there) a YAML 1.1 reader would take for something else', () => {
    const out = helmReleaseFiles(
      [{ ...db(), values: { vendor: { flag: 'yes', mode: 'on', octal: '0777', n: 'null' }, customer: {} } }],
      options,
    );
    expect(parse(fileOf(out.files, 'db/values-vendor.yaml')!).data['values.yaml']).toBe(
      'flag: "yes"\nmode: "on"\noctal: "0777"\n"n": "null"\n',
    );
  });
});

describe('bad input (exit 3, naming the release and the key)', () => {
  const failure = (input: HelmReleaseInput[]): InvalidInputError => {
    try {
      helmReleaseFiles(input, options);
    } catch (error) {
      if (error instanceof InvalidInputError) return error;
      throw error;
    }
    throw new Error('no error');
  };

  it('refuses a value Flux cannot read as JSON', () => {
    const e = failure([{ ...db(), values: { vendor: {}, customer: { resources: { cpu: Number.NaN } } } }]);
    expect(e.exitCode).toBe(ExitCode.invalidInput);
    expect(e.message).toBe(
      'release store-data/db: the customer value at resources.cpu cannot be written in the HelmRelease form: NaN is not a JSON number',
    );
    expect(e.key).toBe('resources.cpu');
    const date = failure([{ ...db(), values: { vendor: { when: new Date(0) }, customer: {} } }]);
    expect(date.message).toBe(
      'release store-data/db: the vendor value at when cannot be written in the HelmRelease form: a Date',
    );
  });

  it('refuses a duration Flux does not take', () => {
    const e = failure([{ ...db(), timeout: '1m500us' }]);
    expect(e.exitCode).toBe(ExitCode.invalidInput);
    expect(e.message).toBe(
      'release store-data/db: --timeout "1m500us" cannot be written in a HelmRelease (Flux takes durations in h, m, s or ms)',
    );
  });

  it('refuses a dependency outside the export', () => {
    const e = failure([shop()]);
    expect(e.message).toBe('release store/shop depends on store-data/db, which is not in the export');
  });

  it('refuses values larger than a ConfigMap holds', () => {
    const e = failure([{ ...db(), values: { vendor: { blob: 'x'.repeat(1024 * 1024) }, customer: {} } }]);
    expect(e.message).toMatch(
      /^release store-data\/db: the vendor values take 10485\d\d bytes, more than a ConfigMap or Secret holds \(1 MiB\)$/,
    );
  });
});
