// Flux itself, built from its Go modules and run against the local cluster (issue 23): a
// kustomize tree pushed with pushArtifact to the real node's registry is pulled by
// source-controller (OCIRepository) and applied by kustomize-controller (Kustomization) to
// Ready; a new revision without one object prunes it. And the HelmRelease CRD generated from
// helm-controller's API module is installed, so the real API server validates HelmReleases.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { pushArtifact } from '../../src/export/oci-push.js';
import { startFlux, type RunningFlux } from '../cluster/flux.js';
import {
  applyYaml,
  conditionOf,
  createNamespace,
  deleteNamespace,
  getJson,
  kubectl,
  waitFor,
} from '../cluster/kube.js';
import { tempDir } from '../helpers.js';
import { kubeconfig } from './cluster-helpers.js';

const registry = inject('registry');
const log = (line: string) => process.stderr.write(`[flux] ${line}\n`);
const SOURCE = 'https://git.example.invalid/vendor/storefront.git';

let flux: RunningFlux | undefined;
let fluxNs = '';
let appNs = '';
let failed = false;
afterEach((context) => {
  if (context.task.result?.state === 'fail' || context.task.result?.errors?.length) failed = true;
});

// A cold build (Go 1.27, two controllers, controller-gen) takes many minutes: see src/export/README.md, "Flux proves the export".
beforeAll(async () => {
  flux = await startFlux({ kubeconfig: kubeconfig(), log });
  fluxNs = await createNamespace('fluxproof', { kubeconfig: kubeconfig() });
  appNs = await createNamespace('fluxproof-app', { kubeconfig: kubeconfig() });
}, 90 * 60_000);

// Flux's objects carry finalizers only the running controllers remove: delete them (the
// Kustomization prunes what it applied) before stopping Flux, then the namespaces.
afterAll(async () => {
  if (fluxNs) await deleteFluxObjects(fluxNs);
  if (failed) log(`a test failed: the controllers' logs are kept in ${flux?.logDir}`);
  await flux?.stop({ keepLogs: failed });
  for (const ns of [fluxNs, appNs]) if (ns) await deleteNamespace(ns, { kubeconfig: kubeconfig() });
}, 300_000);

const FLUX_KINDS = 'kustomizations.kustomize.toolkit.fluxcd.io,ocirepositories.source.toolkit.fluxcd.io';

/** If the controllers cannot finish (one died), the finalizers are dropped so the namespace can go. */
async function deleteFluxObjects(namespace: string): Promise<void> {
  const opts = { kubeconfig: kubeconfig(), namespace, timeoutMs: 150_000, reject: false };
  const deleted = await kubectl(['delete', FLUX_KINDS, '--all', '--wait=true', '--timeout=120s'], opts);
  if (deleted.exitCode === 0) return;
  log(
    `Flux did not finish deleting its objects (${deleted.stderr.trim()}); dropping their finalizers. Logs: ${flux?.logDir}`,
  );
  const names = (await kubectl(['get', FLUX_KINDS, '-o', 'name'], opts)).stdout.split('\n').filter(Boolean);
  for (const name of names)
    await kubectl(['patch', name, '--type=merge', '-p', '{"metadata":{"finalizers":null}}'], opts);
}

/** The kustomize tree: a ConfigMap and a Deployment (on the KWOK node, so its pod gets Ready). */
function writeTree(dir: string, withConfigMap: boolean): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const resources = withConfigMap ? ['configmap.yaml', 'deployment.yaml'] : ['deployment.yaml'];
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n${resources.map((r) => `  - ${r}\n`).join('')}`,
  );
  if (withConfigMap)
    writeFileSync(
      join(dir, 'configmap.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  greeting: hello\n',
    );
  writeFileSync(
    join(dir, 'deployment.yaml'),
    `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.invalid/storefront/web:1.4.2
`,
  );
}

function fluxObjects(repository: string, tag: string): string {
  return `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: storefront, namespace: ${fluxNs}}
spec:
  url: oci://${registry}/${repository}
  ref: {tag: ${tag}}
  insecure: true
  interval: 10m
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: storefront, namespace: ${fluxNs}}
spec:
  interval: 10m
  sourceRef: {kind: OCIRepository, name: storefront}
  path: ./
  prune: true
  wait: true
  timeout: 3m
  targetNamespace: ${appNs}
`;
}

const get = (kind: string, name: string, namespace: string) =>
  getJson(['get', kind, name], { kubeconfig: kubeconfig(), namespace });

/** Waits until the Kustomization has applied `revision` and is Ready=True. */
async function waitApplied(revision: string): Promise<void> {
  await waitFor(
    `Kustomization applied ${revision} and Ready`,
    async () => {
      const k = await get('kustomizations.kustomize.toolkit.fluxcd.io', 'storefront', fluxNs);
      return k.status?.lastAppliedRevision === revision && conditionOf(k, 'Ready')?.status === 'True';
    },
    { timeoutMs: 240_000, intervalMs: 500 },
  );
}

describe('Flux applies an artifact pushed by pushArtifact', () => {
  it('reconciles to Ready with the exact objects, and prunes the ConfigMap a new revision drops', async () => {
    const dir = join(tempDir('flux-tree'), 'tree');
    const repository = `flux-proof/${fluxNs}`;
    writeTree(dir, true);
    const push = (tag: string) =>
      pushArtifact({
        registry,
        repository,
        tag,
        dir,
        source: SOURCE,
        revision: `${tag}@sha1:0123456789abcdef0123456789abcdef01234567`,
        plainHttp: true,
      });
    const first = await push('v1');

    const applied = Date.now();
    await applyYaml(fluxObjects(repository, 'v1'), { kubeconfig: kubeconfig() });
    await waitApplied(`v1@${first}`);
    log(
      `figure: Kustomization applied to Ready in ${((Date.now() - applied) / 1000).toFixed(1)} s (source pull included)`,
    );

    const settings = await get('configmap', 'settings', appNs);
    expect(settings.data).toEqual({ greeting: 'hello' });
    expect(settings.metadata.labels).toEqual({
      'kustomize.toolkit.fluxcd.io/name': 'storefront',
      'kustomize.toolkit.fluxcd.io/namespace': fluxNs,
    });
    const web = await get('deployment', 'web', appNs);
    expect(web.spec.replicas).toBe(2);
    expect(web.spec.template.spec.containers.map((c: { name: string; image: string }) => [c.name, c.image])).toEqual([
      ['web', 'registry.invalid/storefront/web:1.4.2'],
    ]);
    expect(web.status.readyReplicas).toBe(2);

    writeTree(dir, false);
    const second = await push('v2');
    expect(second).not.toBe(first);
    await kubectl(
      [
        'patch',
        'ocirepositories.source.toolkit.fluxcd.io',
        'storefront',
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { ref: { tag: 'v2' } } }),
      ],
      { kubeconfig: kubeconfig(), namespace: fluxNs },
    );
    await waitApplied(`v2@${second}`);
    const gone = await kubectl(['get', 'configmap', 'settings'], {
      kubeconfig: kubeconfig(),
      namespace: appNs,
      reject: false,
    });
    expect(gone.stderr).toContain('configmaps "settings" not found');
    expect((await get('deployment', 'web', appNs)).metadata.labels).toEqual({
      'kustomize.toolkit.fluxcd.io/name': 'storefront',
      'kustomize.toolkit.fluxcd.io/namespace': fluxNs,
    });
  });

  it('source-controller records the artifact as pushed: the tag and manifest digest, the source and revision annotations', async () => {
    const dir = join(tempDir('flux-meta'), 'tree');
    writeTree(dir, true);
    const repository = `flux-proof/${fluxNs}-meta`;
    const digest = await pushArtifact({
      registry,
      repository,
      tag: '1.0.0',
      dir,
      source: SOURCE,
      revision: '1.0.0@sha1:fedcba9876543210fedcba9876543210fedcba98',
      plainHttp: true,
    });
    const name = 'meta';
    await applyYaml(
      `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: ${name}, namespace: ${fluxNs}}
spec: {url: 'oci://${registry}/${repository}', ref: {tag: 1.0.0}, insecure: true, interval: 10m}
`,
      { kubeconfig: kubeconfig() },
    );
    const repo = await waitFor(
      'OCIRepository Ready',
      async () => {
        const r = await get('ocirepositories.source.toolkit.fluxcd.io', name, fluxNs);
        return conditionOf(r, 'Ready')?.status === 'True' ? r : undefined;
      },
      { timeoutMs: 120_000 },
    );
    expect(repo.status.artifact.revision).toBe(`1.0.0@${digest}`);
    expect(repo.status.artifact.metadata['org.opencontainers.image.source']).toBe(SOURCE);
    expect(repo.status.artifact.metadata['org.opencontainers.image.revision']).toBe(
      '1.0.0@sha1:fedcba9876543210fedcba9876543210fedcba98',
    );
  });
});

const helmRelease = (name: string, retries: unknown) => `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ${name}, namespace: ${fluxNs}}
spec:
  interval: 10m
  releaseName: storefront
  timeout: 5m
  chart:
    spec:
      chart: storefront
      version: 1.4.x
      sourceRef: {kind: HelmRepository, name: vendor}
  valuesFrom:
    - {kind: ConfigMap, name: storefront-vendor-values}
    - {kind: Secret, name: storefront-customer-values}
  install:
    remediation: {retries: ${JSON.stringify(retries)}}
  upgrade:
    remediation: {retries: 3, strategy: rollback}
  driftDetection:
    mode: enabled
    ignore:
      - paths: [/spec/replicas]
        target: {kind: Deployment}
  test: {enable: true}
`;

describe('the HelmRelease CRD generated from helm-controller/api', () => {
  const dryRun = (yaml: string) =>
    kubectl(['apply', '--dry-run=server', '-f', '-'], { kubeconfig: kubeconfig(), input: yaml, reject: false });

  it('is installed and serves v2 only (helm-controller/api marks v2beta1 and v2beta2 skipversion)', async () => {
    const crd = await getJson(['get', 'crd', 'helmreleases.helm.toolkit.fluxcd.io'], { kubeconfig: kubeconfig() });
    const versions = crd.spec.versions.map((v: { name: string; served: boolean; storage: boolean }) => [
      v.name,
      v.served,
      v.storage,
    ]);
    expect(versions).toEqual([['v2', true, true]]);
  });

  it('accepts a valid v2 HelmRelease in a server-side dry run', async () => {
    const r = await dryRun(helmRelease('valid', 3));
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('helmrelease.helm.toolkit.fluxcd.io/valid created (server dry run)');
  });

  it('refuses one with a wrong field type, naming the field', async () => {
    const r = await dryRun(helmRelease('invalid', 'three'));
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('The HelmRelease "invalid" is invalid');
    expect(r.stderr).toContain(
      'spec.install.remediation.retries: Invalid value: "string": spec.install.remediation.retries in body must be of type integer: "string"',
    );
  });
});
