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
import { pushArtifact } from '../../src/export/oci-push.js';
import { KUSTOMIZATION, kustomizationsReady, startFlux, type RunningFlux } from '../cluster/flux.js';
import { applyYaml, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { appDir, repoRoot, runCli, tempDir } from '../helpers.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { expectFluxEqualsInstall, installSnapshot } from './export-compare.js';

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
    await kubectl(['delete', `${KUSTOMIZATION},${OCI_REPOSITORY}`, '--all', '--wait=true', '--timeout=120s'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
      reject: false,
      timeoutMs: 150_000,
    });
  }
  await flux?.stop();
}, 300_000);

interface Case {
  /** The installer's inputs, the same for install and export. */
  inputs: string[];
  env?: Record<string, string>;
}

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await runCli(args, { env: { KUBECONFIG: kubeconfig(), ...env } });
  expect(r.exitCode, r.stderr.slice(-3000)).toBe(0);
  return r;
}

/** Every Kustomization of the export in `fluxNs` Ready; returns the seconds it took. */
const ready = (fluxNs: string, names: string[], revision?: string) =>
  kustomizationsReady({ kubeconfig: kubeconfig(), namespace: fluxNs, names, revision });

/** Exports, pushes the folder to the node's registry and returns the artifact's revision. */
async function exportAndPush(
  c: Case,
  appNs: string,
  fluxNs: string,
  tag: string,
): Promise<{ out: string; revision: string; seconds: number }> {
  const out = join(tempDir('export-flux'), 'out');
  const began = Date.now();
  await cli(
    [
      'export',
      '--out',
      out,
      '--namespace',
      appNs,
      '--flux-namespace',
      fluxNs,
      '--oci-repository',
      `${registry}/export-flux/${appNs}`,
      '--oci-tag',
      tag,
      '--oci-insecure',
      ...c.inputs,
    ],
    c.env,
  );
  const seconds = (Date.now() - began) / 1000;
  const digest = await pushArtifact({
    registry,
    repository: `export-flux/${appNs}`,
    tag,
    dir: out,
    source: 'helm-installer export',
    revision: `${tag}@sha1:${'0'.repeat(40)}`,
    plainHttp: true,
  });
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
  // Install's objects as it left them, read before Flux applies anything.
  const byInstall = await installSnapshot(releases, installNs);

  const { out, revision, seconds } = await exportAndPush(c, appNs, fluxNs, 'v1');
  // What the export's README says to apply: the source, then the root Kustomization of ./flux,
  // which applies (and prunes) one Kustomization per release.
  await applyYaml(readFileSync(join(out, 'flux', 'source.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
  await applyYaml(readFileSync(join(out, 'flux', 'root.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
  const fluxSeconds = await ready(fluxNs, releases, revision);
  log(
    `figure (${releases.join(', ')}): export ${seconds.toFixed(2)} s; Flux from applying the source to every Kustomization Ready ${fluxSeconds.toFixed(1)} s; our install ${installSeconds.toFixed(1)} s`,
  );

  await expectFluxEqualsInstall({ releases, installNs, appNs, fluxNs }, byInstall);
  return { fluxNs, appNs };
}

describe('the rendered export, applied by Flux, equals our install', () => {
  it('the bundled app (three releases, airgap on); the cache switched off is pruned with its Kustomization', async () => {
    const values = join(tempDir('export-flux-values'), 'storefront.yaml');
    await execa('cp', [join(appDir, 'examples', 'customer-values.yaml'), values]);
    const c: Case = {
      inputs: ['--values', values, '--registry', `${registry}/acme`, '--image-path', 'Promotion:spec.image'],
    };
    const { fluxNs, appNs } = await proveEqual(c, ['promotions-operator', 'storefront', 'storefront-cache']);
    const web = await getJson(['get', 'deployment', 'storefront-web'], { kubeconfig: kubeconfig(), namespace: appNs });
    expect(web.spec.template.spec.containers.map((x: any) => x.image)).toEqual([
      `${registry}/acme/storefront-web:2.3.1`,
    ]);

    // The next export without the cache: pushed under the same tag, Flux drops its Kustomization
    // and with it every object the cache release had.
    const off: Case = { ...c, env: { STOREFRONT_CACHE_ENABLED: 'false' } };
    const next = await exportAndPush(off, appNs, fluxNs, 'v1');
    await kubectl(
      ['annotate', '--overwrite', OCI_REPOSITORY, '--all', `reconcile.fluxcd.io/requestedAt=${Date.now()}`],
      { kubeconfig: kubeconfig(), namespace: fluxNs },
    );
    await ready(fluxNs, ['promotions-operator', 'storefront'], next.revision);
    await waitFor(
      'the cache release pruned',
      async () => {
        const left = await kubectl(
          ['get', 'deployment,service,configmap', '-l', 'app.kubernetes.io/instance=storefront-cache', '-o', 'name'],
          { kubeconfig: kubeconfig(), namespace: appNs },
        );
        const kustomization = await kubectl(['get', KUSTOMIZATION, 'storefront-cache'], {
          kubeconfig: kubeconfig(),
          namespace: fluxNs,
          reject: false,
        });
        return left.stdout.trim() === '' && kustomization.exitCode !== 0 ? true : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 1000 },
    );
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
      const release = basename(chart)
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .slice(0, 40);
      await proveEqual({ inputs: ['--chart', chart, '--release', release, '--registry', `${registry}/acme`] }, [
        release,
      ]);
    });
  }
});
