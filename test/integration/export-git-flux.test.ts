// Issue 31's proof of `export --source git` by Flux itself, as export-flux.test.ts proves the OCI
// form: the export, committed to a bare repository served on the loopback by git's own smart
// HTTP (`git http-backend`, test/cluster/git-http.ts) and applied through the export's own Flux
// files (a GitRepository), is fetched by Flux's source-controller and applied by its
// kustomize-controller; the objects equal what our `install` applies for the same inputs. A
// second export for the vendor's next chart version, into the same work tree, is a diff of
// exactly the base/ files the new version changes; committed and pushed, Flux applies it and the
// objects equal install's upgrade.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kustomizationsReady, KUSTOMIZATION, startFlux, type RunningFlux } from '../cluster/flux.js';
import { startGitHttpServer, type GitHttpServer } from '../cluster/git-http.js';
import { applyYaml, getJson, kubectl } from '../cluster/kube.js';
import { repoRoot, runCli, tempDir } from '../helpers.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { expectFluxEqualsInstall, installSnapshot } from './export-compare.js';

const registry = inject('registry');
const namespace = namespacesDeletedAfterAll();
const log = (line: string) => process.stderr.write(`[export-git-flux] ${line}\n`);
const GIT_REPOSITORY = 'gitrepositories.source.toolkit.fluxcd.io';
const RELEASE = 'gx';
let flux: RunningFlux | undefined;
let gitServer: GitHttpServer | undefined;
const fluxNamespaces: string[] = [];

beforeAll(async () => {
  gitServer = await startGitHttpServer(join(tempDir('export-git-srv'), 'repos'));
  flux = await startFlux({ kubeconfig: kubeconfig(), log });
}, 90 * 60_000);

afterAll(async () => {
  // The Kustomizations prune what they applied when deleted (their finalizer): while Flux runs.
  for (const ns of fluxNamespaces) {
    await kubectl(['delete', `${KUSTOMIZATION},${GIT_REPOSITORY}`, '--all', '--wait=true', '--timeout=120s'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
      reject: false,
      timeoutMs: 150_000,
    });
  }
  await flux?.stop();
  await gitServer?.stop();
}, 300_000);

async function cli(args: string[]): Promise<void> {
  const r = await runCli(args, { env: { KUBECONFIG: kubeconfig() } });
  expect(r.exitCode, r.stderr.slice(-3000)).toBe(0);
}

const git = async (dir: string, args: string[]) => (await execa('git', ['-C', dir, ...args])).stdout;

/**
 * The vendor's next version, made from the fixture: a new image tag and a new worker Deployment
 * (one replica: a new object the customer's values change would rightly add a patch to overlay/).
 */
function nextVersion(v1: string): string {
  const v2 = join(tempDir('export-git-chart'), 'git-export');
  cpSync(v1, v2, { recursive: true });
  writeFileSync(
    join(v2, 'Chart.yaml'),
    readFileSync(join(v2, 'Chart.yaml'), 'utf8').replace('version: 1.0.0', 'version: 1.1.0'),
  );
  writeFileSync(
    join(v2, 'values.yaml'),
    readFileSync(join(v2, 'values.yaml'), 'utf8').replace('tag: "1.0.0"', 'tag: "1.1.0"'),
  );
  const worker = readFileSync(join(v2, 'templates', 'web.yaml'), 'utf8')
    .split('---')[0]!
    .replaceAll('-web', '-worker')
    .replaceAll('name: web', 'name: worker')
    .replace('{{ .Values.image.repository }}', 'shop/worker')
    .replace('{{ .Values.replicas }}', '1');
  writeFileSync(join(v2, 'templates', 'worker.yaml'), worker);
  return v2;
}

/** Commits everything and pushes it to main; returns Flux's revision of that commit. */
async function commitAndPush(work: string, message: string): Promise<string> {
  await git(work, ['add', '-A']);
  await git(work, ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '--quiet', '-m', message]);
  await git(work, ['push', '--quiet', 'origin', 'HEAD:main']);
  return `main@sha1:${await git(work, ['rev-parse', 'HEAD'])}`;
}

describe('the rendered export for a git repository, applied by Flux, equals our install', () => {
  it('from a GitRepository on the loopback; the next chart version is a base/-only diff that Flux applies', async () => {
    const installNs = await namespace('xg-install');
    const appNs = await namespace('xg-flux-app');
    const fluxNs = await namespace('xg-flux');
    fluxNamespaces.push(fluxNs);
    const v1 = join(repoRoot, 'test', 'fixtures', 'charts', 'git-export');
    const v2 = nextVersion(v1);
    const customer = join(tempDir('export-git-values'), 'customer.yaml');
    writeFileSync(customer, 'replicas: 2\ngreeting: hello from the customer\n');
    const inputs = (chart: string) => [
      '--chart',
      chart,
      '--release',
      RELEASE,
      '--values',
      customer,
      '--registry',
      `${registry}/acme`,
    ];

    await gitServer!.createRepository(appNs, 'main');
    const url = gitServer!.url(appNs);
    const work = join(tempDir('export-git-work'), 'fleet');
    await execa('git', ['clone', '--quiet', url, work]);
    const out = join(work, 'clusters', 'prod');
    const exportArgs = [
      'export',
      '--out',
      out,
      '--source',
      'git',
      '--git-url',
      url,
      '--namespace',
      appNs,
      '--flux-namespace',
      fluxNs,
    ];

    await cli(['install', '--namespace', installNs, '--skip-preflight', '--timeout', '180s', ...inputs(v1)]);
    const byInstall = await installSnapshot([RELEASE], installNs);
    await cli([...exportArgs, ...inputs(v1)]);
    const first = await commitAndPush(work, 'Export of git-export 1.0.0');
    // What the export's README says to apply, once: the source, then the root Kustomization.
    await applyYaml(readFileSync(join(out, 'flux', 'source.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
    await applyYaml(readFileSync(join(out, 'flux', 'root.yaml'), 'utf8'), { kubeconfig: kubeconfig() });
    const seconds = await kustomizationsReady({
      kubeconfig: kubeconfig(),
      namespace: fluxNs,
      names: [RELEASE],
      revision: first,
    });
    log(`figure: Flux from applying the GitRepository to the Kustomization Ready ${seconds.toFixed(1)} s`);
    await expectFluxEqualsInstall({ releases: [RELEASE], installNs, appNs, fluxNs }, byInstall);

    // The vendor's 1.1.0: exported into the same work tree, without --force.
    await cli(['install', '--namespace', installNs, '--skip-preflight', '--timeout', '180s', ...inputs(v2)]);
    const byUpgrade = await installSnapshot([RELEASE], installNs);
    await cli([...exportArgs, ...inputs(v2)]);
    await git(work, ['add', '-A']);
    const base = `clusters/prod/${RELEASE}/base`;
    // The export's list of its files gains the new one (what the next export may replace: issue 36).
    expect((await git(work, ['diff', '--cached', '--name-status'])).split('\n').sort()).toEqual([
      `A\t${base}/deployment-${RELEASE}-worker.yaml`,
      'M\tclusters/prod/.helm-installer-export',
      `M\t${base}/README.md`,
      `M\t${base}/deployment-${RELEASE}-web.yaml`,
      `M\t${base}/kustomization.yaml`,
    ]);
    const webDiff = (await git(work, ['diff', '--cached', '-U0', '--', `${base}/deployment-${RELEASE}-web.yaml`]))
      .split('\n')
      .filter((l) => /^[-+] /.test(l));
    expect(webDiff).toEqual([
      `-          image: "${registry}/acme/web:1.0.0"`,
      `+          image: "${registry}/acme/web:1.1.0"`,
    ]);
    const second = await commitAndPush(work, 'Upgrade git-export to 1.1.0');
    await kubectl(
      ['annotate', '--overwrite', GIT_REPOSITORY, '--all', `reconcile.fluxcd.io/requestedAt=${Date.now()}`],
      { kubeconfig: kubeconfig(), namespace: fluxNs },
    );
    await kustomizationsReady({ kubeconfig: kubeconfig(), namespace: fluxNs, names: [RELEASE], revision: second });
    const worker = await getJson(['get', 'deployment', `${RELEASE}-worker`], {
      kubeconfig: kubeconfig(),
      namespace: appNs,
    });
    expect(worker.spec.template.spec.containers.map((c: { image: string }) => c.image)).toEqual([
      `${registry}/acme/worker:1.1.0`,
    ]);
    await expectFluxEqualsInstall({ releases: [RELEASE], installNs, appNs, fluxNs }, byUpgrade);
  });
});
