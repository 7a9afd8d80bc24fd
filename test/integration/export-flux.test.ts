// Issue 23's proof by Flux itself: `export` (the rendered form), pushed to the real node's
// registry as a Flux OCI artifact and applied through the export's own Flux files by Flux's
// source-controller and kustomize-controller (built from their Go modules, test/cluster/flux.ts),
// reconciles to Ready and leaves in the cluster the objects our `install` applies for the same
// inputs, object for object, images included: for the bundled app (a release plan of three
// charts, airgap on) and two fixture charts that reproduce public charts' image conventions
// (ingress-nginx's global registry, an operator's image flags). A release the next export drops
// is pruned. Expected objects come from install's own releases (helm get manifest), never from
// the export's code.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { pushArtifact } from '../../src/export/oci-push.js';
import { KUSTOMIZATION, kustomizationsReady, startFlux, type RunningFlux } from '../cluster/flux.js';
import { applyYaml, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { appDir, helm4, repoRoot, runCli, tempDir } from '../helpers.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const registry = inject('registry');
const namespace = namespacesDeletedAfterAll();
const log = (line: string) => process.stderr.write(`[export-flux] ${line}\n`);
const OCI_REPOSITORY = 'ocirepositories.source.toolkit.fluxcd.io';
let flux: RunningFlux | undefined;
const fluxNamespaces: string[] = [];

beforeAll(async () => {
  flux = await startFlux({ kubeconfig: kubeconfig(), log });
}, 90 * 60_000);

afterAll(async () => {
  // The Kustomizations prune what they applied when deleted (their finalizer): while Flux runs.
  for (const ns of fluxNamespaces) {
    await kubectl(['delete', `${KUSTOMIZATION},${OCI_REPOSITORY}`, '--all', '--wait=true', '--timeout=120s'], { kubeconfig: kubeconfig(), namespace: ns, reject: false, timeoutMs: 150_000 });
  }
  await flux?.stop();
}, 300_000);

interface Case {
  /** The installer's inputs, the same for install and export. */
  inputs: string[];
  env?: Record<string, string>;
}

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [key: string]: any;
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(args, { env: { KUBECONFIG: kubeconfig(), ...env } });
  expect(r.exitCode, r.stderr.slice(-3000)).toBe(0);
  return r;
}

/** The release's objects as install applied them (helm's record), hooks apart. */
async function installed(release: string, ns: string): Promise<{ objects: K8sObject[]; hooks: K8sObject[] }> {
  const read = async (what: string) => {
    const r = await execa(helm4, ['get', what, release, '--namespace', ns], { env: { KUBECONFIG: kubeconfig() } });
    return parseAllDocuments(r.stdout).map((d) => d.toJS() as K8sObject).filter((o) => o?.kind);
  };
  const hooks = (await read('hooks')).filter((h) => !String(h.metadata.annotations?.['helm.sh/hook']).includes('test'));
  return { objects: await read('manifest'), hooks };
}

/**
 * A live object less what differs by nature between two copies in two namespaces, and what each
 * applier adds of its own. `rendered`: helm's manifest of the object (the same for both sides): a
 * label helm adds when it applies (app.kubernetes.io/managed-by, unless the chart sets it) is
 * helm's, not the chart's; a node port the chart does not set is the API server's.
 */
function comparable(o: K8sObject, ns: string, rendered?: K8sObject): unknown {
  const c = structuredClone(o);
  if (rendered && !rendered.metadata.labels?.['app.kubernetes.io/managed-by']) delete c.metadata.labels?.['app.kubernetes.io/managed-by'];
  // A pod template's checksum of another rendered object (the storefront's checksum/config) hashes
  // that object's text, its namespace included: it differs with the namespace, as that object
  // does (which is compared itself, namespace aside).
  const template = c.spec?.template?.metadata;
  if (template?.annotations) template.annotations = Object.fromEntries(Object.entries(template.annotations as Record<string, string>).filter(([k]) => !k.startsWith('checksum/')));
  delete c.status;
  for (const k of ['namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields']) delete c.metadata[k];
  const keep = (m: Record<string, string> | undefined, drop: RegExp) => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !drop.test(k)));
  // Who applied it: helm's ownership annotations, Flux's labels; the Deployment controller's revision.
  c.metadata.labels = keep(c.metadata.labels, /^kustomize\.toolkit\.fluxcd\.io\//);
  c.metadata.annotations = keep(c.metadata.annotations, /^(meta\.helm\.sh\/|deployment\.kubernetes\.io\/revision$|kustomize\.toolkit\.fluxcd\.io\/)/);
  if (c.kind === 'Service') {
    for (const k of ['clusterIP', 'clusterIPs']) delete c.spec[k];
    // A NodePort or LoadBalancer Service's node ports are allocated by the API server, one per
    // copy, unless the chart sets them (ingress-nginx's controller Service).
    const fixed = new Set(((rendered?.spec?.ports ?? []) as { name?: string; nodePort?: number }[]).filter((p) => p.nodePort).map((p) => p.name));
    for (const port of (c.spec.ports ?? []) as { name?: string; nodePort?: number }[]) if (!fixed.has(port.name)) delete port.nodePort;
  }
  return JSON.parse(JSON.stringify(c).replaceAll(ns, '<namespace>'));
}

/** kubectl's name for the object's kind: `Deployment.apps`, `Promotion.storefront.example.com`, `ConfigMap`. */
function resourceOf(o: K8sObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return group ? `${o.kind}.${group}` : o.kind;
}

/** Every Kustomization of the export in `fluxNs` Ready; returns the seconds it took. */
const ready = (fluxNs: string, names: string[], revision?: string) => kustomizationsReady({ kubeconfig: kubeconfig(), namespace: fluxNs, names, revision });

/** Exports, pushes the folder to the node's registry and returns the artifact's revision. */
async function exportAndPush(c: Case, appNs: string, fluxNs: string, tag: string): Promise<{ out: string; revision: string; seconds: number }> {
  const out = join(tempDir('export-flux'), 'out');
  const began = Date.now();
  await cli(['export', '--out', out, '--namespace', appNs, '--flux-namespace', fluxNs, '--oci-repository', `${registry}/export-flux/${appNs}`, '--oci-tag', tag, '--oci-insecure', ...c.inputs], c.env);
  const seconds = (Date.now() - began) / 1000;
  const digest = await pushArtifact({ registry, repository: `export-flux/${appNs}`, tag, dir: out, source: 'helm-installer export', revision: `${tag}@sha1:${'0'.repeat(40)}`, plainHttp: true });
  return { out, revision: `${tag}@${digest}`, seconds };
}

/** Installs with our installer and with Flux from the export; compares the two, release by release. */
async function proveEqual(c: Case, releases: string[]): Promise<{ fluxNs: string; appNs: string }> {
  const installNs = await namespace('xf-install');
  const appNs = await namespace('xf-flux-app');
  const fluxNs = await namespace('xf-flux');
  fluxNamespaces.push(fluxNs);
  const t0 = Date.now();
  await cli(['install', '--namespace', installNs, '--skip-preflight', '--timeout', '180s', ...c.inputs], c.env);
  const installSeconds = (Date.now() - t0) / 1000;
  // Install's objects as it left them, read before Flux applies anything: a cluster-scoped one
  // (a ClusterRoleBinding, a CRD) is the same object for both, and Flux's apply changes it.
  const byInstall = new Map<string, unknown>();
  for (const release of releases) {
    for (const o of (await installed(release, installNs)).objects) {
      const live = await getJson<K8sObject>(['get', resourceOf(o), o.metadata.name], { kubeconfig: kubeconfig(), namespace: installNs });
      byInstall.set(`${release}: ${o.kind}/${o.metadata.name}`, comparable(live, installNs, o));
    }
  }

  const { out, revision, seconds } = await exportAndPush(c, appNs, fluxNs, 'v1');
  // What the export's README says to apply: the source, then the root Kustomization of ./flux,
  // which applies (and prunes) one Kustomization per release.
  await applyYaml(readFileSync(join(out, 'flux', 'source.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
  await applyYaml(readFileSync(join(out, 'flux', 'root.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
  const fluxSeconds = await ready(fluxNs, releases, revision);
  log(`figure (${releases.join(', ')}): export ${seconds.toFixed(2)} s; Flux from applying the source to every Kustomization Ready ${fluxSeconds.toFixed(1)} s; our install ${installSeconds.toFixed(1)} s`);

  for (const release of releases) {
    const { objects, hooks } = await installed(release, installNs);
    const k = await getJson(['get', KUSTOMIZATION, release], { kubeconfig: kubeconfig(), namespace: fluxNs });
    // Flux's inventory ids are <namespace>_<name>_<group>_<kind>.
    const applied = (k.status.inventory.entries as { id: string }[]).map((e) => { const [, name, , kind] = e.id.split('_'); return `${kind}/${name}`; }).sort();
    const crds = applied.filter((x) => x.startsWith('CustomResourceDefinition/'));
    expect(applied, release).toEqual([...new Set([...objects, ...hooks].map((o) => `${o.kind}/${o.metadata.name}`).concat(crds))].sort());
    for (const o of objects) {
      const live = await getJson<K8sObject>(['get', resourceOf(o), o.metadata.name], { kubeconfig: kubeconfig(), namespace: appNs });
      const key = `${release}: ${o.kind}/${o.metadata.name}`;
      expect(comparable(live, appNs, o), key).toEqual(byInstall.get(key));
    }
  }
  return { fluxNs, appNs };
}

describe('the rendered export, applied by Flux, equals our install', () => {
  it('the bundled app (three releases, airgap on); the cache switched off is pruned with its Kustomization', async () => {
    const values = join(tempDir('export-flux-values'), 'storefront.yaml');
    await execa('cp', [join(appDir, 'examples', 'customer-values.yaml'), values]);
    const c: Case = { inputs: ['--values', values, '--registry', `${registry}/acme`, '--image-path', 'Promotion:spec.image'] };
    const { fluxNs, appNs } = await proveEqual(c, ['promotions-operator', 'storefront', 'storefront-cache']);
    const web = await getJson(['get', 'deployment', 'storefront-web'], { kubeconfig: kubeconfig(), namespace: appNs });
    expect(web.spec.template.spec.containers.map((x: any) => x.image)).toEqual([`${registry}/acme/storefront-web:2.3.1`]);

    // The next export without the cache: pushed under the same tag, Flux drops its Kustomization
    // and with it every object the cache release had.
    const off: Case = { ...c, env: { STOREFRONT_CACHE_ENABLED: 'false' } };
    const next = await exportAndPush(off, appNs, fluxNs, 'v1');
    await kubectl(['annotate', '--overwrite', OCI_REPOSITORY, '--all', `reconcile.fluxcd.io/requestedAt=${Date.now()}`], { kubeconfig: kubeconfig(), namespace: fluxNs });
    await ready(fluxNs, ['promotions-operator', 'storefront'], next.revision);
    await waitFor('the cache release pruned', async () => {
      const left = await kubectl(['get', 'deployment,service,configmap', '-l', 'app.kubernetes.io/instance=storefront-cache', '-o', 'name'], { kubeconfig: kubeconfig(), namespace: appNs });
      const kustomization = await kubectl(['get', KUSTOMIZATION, 'storefront-cache'], { kubeconfig: kubeconfig(), namespace: fluxNs, reject: false });
      return left.stdout.trim() === '' && kustomization.exitCode !== 0 ? true : undefined;
    }, { timeoutMs: 180_000, intervalMs: 1000 });
  });

  it.each([
    ['global-image-registry (ingress-nginx convention)', 'global-image-registry'],
    ['operator-flags (images in flags and env values)', 'operator-flags'],
  ])('%s, airgap on', async (_label, fixture) => {
    const chart = join(repoRoot, 'test', 'fixtures', 'charts', fixture);
    await proveEqual({ inputs: ['--chart', chart, '--release', fixture, '--registry', `${registry}/acme`] }, [fixture]);
  });

  // The same proof on any chart (a public one fetched for study, never committed):
  // HELM_INSTALLER_EXPORT_FLUX_CHARTS=/path/a:/path/b npx vitest run test/integration/export-flux.test.ts
  for (const chart of (process.env.HELM_INSTALLER_EXPORT_FLUX_CHARTS ?? '').split(':').filter(Boolean)) {
    it(`${chart}, airgap on`, async () => {
      const release = basename(chart).toLowerCase().replace(/[^a-z0-9-]+/g, '-').slice(0, 40);
      await proveEqual({ inputs: ['--chart', chart, '--release', release, '--registry', `${registry}/acme`] }, [release]);
    });
  }
});
