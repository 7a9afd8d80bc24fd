// The HelmRelease form checked by the real API server (issue 23 item 3): helm-controller itself is
// not served by the Go module proxy, so it cannot run here; its HelmRelease CRD, generated from the
// published API module with controller-gen, and source-controller's OCIRepository CRD are
// installed (only when absent: CRDs are cluster-wide and other test runs may use them, so they are
// never deleted), and every exported object is applied with a server-side dry run and strict field
// validation: a field the schema does not know fails, rather than being silently pruned. The
// real command's export of the bundled chart goes through the same check, and its README's
// `helm push` line, run as written, puts the chart where its OCIRepository looks.
//
// The CRDs come from $HELM_INSTALLER_FLUX_CRDS (a folder of CRD YAML files) when set, else they
// are generated here into a temporary folder from the Go module cache.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { helmReleaseFiles } from '../../src/export/helmrelease/helmrelease-files.js';
import type { HelmReleaseInput } from '../../src/export/helmrelease/input.js';
import { kubectl } from '../cluster/kube.js';
import { cacheRoot } from '../cluster/paths.js';
import { appDir, chartDir, helm4, kubectlBin, runCli, tempDir } from '../helpers.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

// The versions the Flux helper pins; the generated CRD is what they publish.
const HELM_CONTROLLER_API = 'github.com/fluxcd/helm-controller/api@v1.7.1';
const SOURCE_CONTROLLER = 'github.com/fluxcd/source-controller@v1.10.1';
const CONTROLLER_GEN = 'sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0';
const CRD_NAMES = ['helmreleases.helm.toolkit.fluxcd.io', 'ocirepositories.source.toolkit.fluxcd.io'];

const registry = inject('registry');
const newNamespace = namespacesDeletedAfterAll();
const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const ownTempDir = (prefix: string) => {
  const dir = tempDir(prefix);
  made.push(dir);
  return dir;
};

const goEnv = () => ({
  GOMODCACHE: join(cacheRoot(), 'gomod'),
  GOCACHE: join(cacheRoot(), 'gobuild'),
  GOFLAGS: '-mod=mod',
  GOWORK: 'off',
  // The latest Flux modules ask for a newer Go; the module proxy serves that toolchain.
  GOTOOLCHAIN: 'go1.27.0',
});

async function moduleDir(module: string): Promise<string> {
  const { stdout } = await execa('go', ['mod', 'download', '-json', module], { env: goEnv() });
  return (JSON.parse(stdout) as { Dir: string }).Dir;
}

/** The HelmRelease CRD by controller-gen from the API module, the OCIRepository one as source-controller ships it. */
async function generateCrds(): Promise<string> {
  const out = ownTempDir('hr-crds');
  const api = join(out, 'api');
  // The module cache is read-only; controller-gen runs inside a copy of the module.
  cpSync(await moduleDir(HELM_CONTROLLER_API), api, { recursive: true });
  await execa('chmod', ['-R', 'u+w', api]);
  const crds = join(out, 'crds');
  mkdirSync(crds);
  await execa('go', ['run', CONTROLLER_GEN, 'crd', 'paths=./...', `output:crd:dir=${crds}`], { cwd: api, env: goEnv() });
  const source = join(await moduleDir(SOURCE_CONTROLLER), 'config', 'crd', 'bases', 'source.toolkit.fluxcd.io_ocirepositories.yaml');
  cpSync(source, join(crds, 'source.toolkit.fluxcd.io_ocirepositories.yaml'));
  return crds;
}

/** Installs each CRD another run has not installed yet, and waits until it is served. */
async function installCrdsIfAbsent(dir: string): Promise<void> {
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
    const name = parse(readFileSync(join(dir, file), 'utf8'))?.metadata?.name as string | undefined;
    if (!name || !CRD_NAMES.includes(name)) continue;
    const present = await kubectl(['get', 'crd', name], { kubeconfig: kubeconfig(), reject: false });
    if (present.exitCode !== 0) {
      const created = await kubectl(['create', '-f', join(dir, file)], { kubeconfig: kubeconfig(), reject: false });
      // Another run may have created it in between: that one is as good.
      if (created.exitCode !== 0 && !/AlreadyExists/.test(created.stderr)) throw new Error(`creating CRD ${name}: ${created.stderr}`);
    }
    await kubectl(['wait', '--for=condition=Established', `crd/${name}`, '--timeout=60s'], { kubeconfig: kubeconfig() });
  }
}

function release(name: string, namespace: string, extra: Partial<HelmReleaseInput> = {}): HelmReleaseInput {
  return {
    release: name,
    namespace,
    chart: { name: 'storefront', version: '1.4.2+airgap.1' },
    dependsOn: [],
    timeout: '2m30s',
    historyMax: 5,
    takeOwnership: 'first-install',
    values: { vendor: { replicas: 2, ingress: { enabled: false } }, customer: { replicas: 3, db: { user: 'shop', password: 'dry-run-pass' } } },
    secretPaths: [['db', 'password']],
    drift: { mode: 'warn', ignore: [{ paths: ['/spec/replicas'], target: { kind: 'Deployment', name: 'web' } }, { paths: ['/metadata/annotations'] }] },
    test: { enabled: true, timeout: '3m', failure: 'keep' },
    images: [
      { from: 'nginx:1.27', to: `${registry}/shop/nginx:1.27`, kind: 'Deployment', name: 'web', path: 'spec.template.spec.containers[0].image' },
      { from: 'quay.io/org/tool:v1', to: `${registry}/shop/tool:v1-airgap`, kind: 'Job', name: 'migrate', path: 'spec.template.spec.initContainers[0].image' },
      { from: 'busybox:1.36', to: `${registry}/shop/busybox:1.36`, kind: 'Deployment', name: 'web', path: 'spec.template.spec.containers[0].env[0].value', via: 'env HELPER' },
    ],
    imagePullSecret: 'registry-pull',
    appSlug: 'storefront',
    ...extra,
  };
}

describe('the HelmRelease form, applied to the real API server with the Flux CRDs (server-side dry run)', () => {
  let fluxNamespace = '';
  let files: { path: string; content: string; secret?: boolean }[] = [];

  beforeAll(async () => {
    const dir = process.env.HELM_INSTALLER_FLUX_CRDS || (await generateCrds());
    expect(existsSync(dir), dir).toBe(true);
    await installCrdsIfAbsent(dir);
    fluxNamespace = await newNamespace('hr-dryrun');
    const out = helmReleaseFiles(
      [
        release('db', 'hr-dryrun-data', { drift: { mode: 'correct', ignore: [] }, test: { enabled: false, timeout: '5m', failure: 'rollback' }, images: [], imagePullSecret: undefined }),
        release('shop', 'hr-dryrun-store', { dependsOn: [{ release: 'db', namespace: 'hr-dryrun-data' }] }),
      ],
      { registry: { address: `${registry}/shop`, insecure: true, pullSecretName: 'registry-pull' }, namespace: fluxNamespace },
    );
    files = out.files.filter((f) => !f.path.endsWith('kustomization.yaml'));
  });

  it('has every object accepted as written: no field refused, none pruned', async () => {
    expect(files.map((f) => f.path)).toContain('shop/helmrelease.yaml');
    for (const file of files) {
      const written = parse(file.content);
      const r = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-o', 'json', '-f', '-'], { kubeconfig: kubeconfig(), input: file.content, reject: false });
      expect(r.stderr.trim(), file.path).toBe('');
      expect(r.exitCode, file.path).toBe(0);
      const served = JSON.parse(r.stdout);
      expect(served.kind).toBe(written.kind);
      // The server's answer still holds every field written: a field outside the schema would be gone.
      // (A Secret comes back with stringData folded into data.)
      if (written.kind === 'Secret') expect(Object.keys(served.data)).toEqual(Object.keys(written.stringData));
      else expect(served.spec ?? served.data, file.path).toMatchObject(written.spec ?? written.data);
    }
  });

  it('the real command\'s export of the bundled chart: every object accepted as written', async () => {
    const out = join(ownTempDir('hr-export'), 'out');
    const inputs = ['--chart', chartDir, '--base-values', join(appDir, 'values', 'base.yaml'), '-f', join(appDir, 'examples', 'customer-values.yaml')];
    const flags = ['--registry', `${registry}/shop`, '--oci-insecure', '--flux-namespace', fluxNamespace, '--chart-repository-path', `charts/${fluxNamespace}`, '--image-pull-secret', 'registry-pull', '--drift-ignore', '/spec/replicas', '--test'];
    const r = await runCli(['export', '--format', 'helmrelease', '--out', out, ...inputs, ...flags]);
    expect(r.exitCode, r.stderr).toBe(0);
    const written = readdirSync(join(out, 'storefront')).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
    expect(written).toEqual(['helmrelease.yaml', 'ocirepository.yaml', 'values-customer.yaml', 'values-generated.yaml', 'values-secret.yaml', 'values-vendor.yaml']);
    for (const file of written) {
      const content = readFileSync(join(out, 'storefront', file), 'utf8');
      const r = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-o', 'json', '-f', '-'], { kubeconfig: kubeconfig(), input: content, reject: false });
      expect(r.stderr.trim(), file).toBe('');
      expect(r.exitCode, file).toBe(0);
      const object = parse(content);
      const served = JSON.parse(r.stdout);
      if (object.kind === 'Secret') expect(Object.keys(served.data)).toEqual(Object.keys(object.stringData));
      else expect(served.spec ?? served.data, file).toMatchObject(object.spec ?? object.data);
    }
    // The README's push line, run as written, puts the chart where the OCIRepository looks for it.
    const push = /^helm push (\S+) (\S+) --plain-http$/m.exec(readFileSync(join(out, 'README.md'), 'utf8'))!;
    expect(push.slice(1)).toEqual(['storefront/chart/storefront-1.4.0.tgz', `oci://${registry}/shop/charts/${fluxNamespace}`]);
    await execa(helm4, ['push', push[1]!, push[2]!, '--plain-http'], { cwd: out });
    const source = parse(readFileSync(join(out, 'storefront', 'ocirepository.yaml'), 'utf8')).spec;
    expect(source.url).toBe(`oci://${registry}/shop/charts/${fluxNamespace}/storefront`);
    const tags = (await (await fetch(`http://${registry}/v2/shop/charts/${fluxNamespace}/storefront/tags/list`)).json()) as { tags: string[] };
    expect(tags.tags).toContain(source.ref.tag);
  });

  it('is checked for real: a drift mode outside the schema is refused', async () => {
    const hr = parseAllDocuments(files.find((f) => f.path === 'shop/helmrelease.yaml')!.content)[0]!.toJS();
    hr.spec.driftDetection.mode = 'correct';
    const r = await kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], { kubeconfig: kubeconfig(), input: JSON.stringify(hr), reject: false });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.driftDetection\.mode: Unsupported value: "correct"/);
  });
});

// Flux's post-renderer runs kustomize's own library on helm's output; `kubectl kustomize` runs the
// same library. The HelmRelease's patches and images, given to it over objects like a chart's,
// must rewrite what the notes do not name, and leave alone what they do.
describe("the HelmRelease's post-renderer, run by kustomize (kubectl kustomize)", () => {
  const objects = [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            imagePullSecrets: [{ name: 'existing' }],
            containers: [{ name: 'web', image: 'nginx:1.27', env: [{ name: 'HELPER', value: 'busybox:1.36' }] }],
          },
        },
      },
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate' },
      spec: { template: { spec: { restartPolicy: 'Never', initContainers: [{ name: 'tool', image: 'quay.io/org/tool:v1' }], containers: [{ name: 'run', image: 'nginx:1.27' }] } } },
    },
    {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'nightly' },
      spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'run', image: 'nginx:1.27' }] } } } } },
    },
    { apiVersion: 'example.com/v1', kind: 'Workflow', metadata: { name: 'batch' }, spec: { templates: [{ container: { image: 'nginx:1.27' } }] } },
  ];

  it('rewrites containers\' images and adds the pull secret; the env value and the custom resource stay as the notes say', async () => {
    const out = helmReleaseFiles([release('shop', 'store')], { registry: { address: `${registry}/shop` } });
    const kustomize = parse(out.files.find((f) => f.path === 'shop/helmrelease.yaml')!.content).spec.postRenderers[0].kustomize;
    const dir = ownTempDir('hr-kustomize');
    writeFileSync(join(dir, 'objects.yaml'), objects.map((o) => stringify(o)).join('---\n'));
    writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: ['objects.yaml'], ...kustomize }));
    const { stdout } = await execa(kubectlBin, ['kustomize', dir]);
    const built = Object.fromEntries(parseAllDocuments(stdout).map((d) => d.toJS()).map((o) => [o.kind, o]));
    const nginx = `${registry}/shop/nginx:1.27`;
    expect(built.Deployment.spec.template.spec.containers).toEqual([{ name: 'web', image: nginx, env: [{ name: 'HELPER', value: 'busybox:1.36' }] }]);
    expect(built.Deployment.spec.template.spec.imagePullSecrets).toEqual([{ name: 'registry-pull' }, { name: 'existing' }]);
    expect(built.Job.spec.template.spec.initContainers).toEqual([{ name: 'tool', image: `${registry}/shop/tool:v1-airgap` }]);
    expect(built.Job.spec.template.spec.containers).toEqual([{ name: 'run', image: nginx }]);
    expect(built.Job.spec.template.spec.imagePullSecrets).toEqual([{ name: 'registry-pull' }]);
    expect(built.CronJob.spec.jobTemplate.spec.template.spec.imagePullSecrets).toEqual([{ name: 'registry-pull' }]);
    expect(built.CronJob.spec.jobTemplate.spec.template.spec.containers).toEqual([{ name: 'run', image: nginx }]);
    expect(built.Workflow.spec).toEqual({ templates: [{ container: { image: 'nginx:1.27' } }] });
    expect(out.notes.map((n) => n.what)).toEqual([
      `image busybox:1.36 -> ${registry}/shop/busybox:1.36 in Deployment/web spec.template.spec.containers[0].env[0].value (env HELPER): not rewritten (kustomize's images only rewrite containers' image fields); set it through the chart's values or a postRenderers patch`,
      'image pull secret registry-pull: added to the pod specs of Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod; pod specs inside other kinds (custom resources) do not get it',
      'drift ignore rules: Flux only leaves the fields out of its drift check; our install also keeps their live values through every upgrade, Flux sets them to what the chart renders at each upgrade',
    ]);
  });
});
