// Removed APIs in the stored record (issue 36), on the real control plane (Kubernetes 1.34) with
// helm 4 and helm 3, each against plain helm on the same input. The release's record is rewritten
// as a 1.24 cluster left it: its PodDisruptionBudget at policy/v1beta1, its HPA at
// autoscaling/v2beta2, and a PodSecurityPolicy. Plain helm fails on that record every time; the
// installer maps it (the original kept beside it) and upgrades; the next same-input run is a no-op.
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { decodeReleasePayload, encodeReleasePayload } from '../../src/cluster/release-secrets.js';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm3, helm4, kubectlBin, repoRoot, runCli } from '../helpers.js';
import {
  history,
  install,
  installerEvents,
  kubeconfig,
  markPending,
  killMidRun,
  namespacesDeletedAfterAll,
  spawnCli,
} from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'removed-apis');
const fresh = namespacesDeletedAfterAll();
const opts = (namespace: string) => ({ kubeconfig: kubeconfig(), namespace });

interface Record1 {
  manifest: string;
  version: number;
}

async function readRecord(ns: string, name: string): Promise<{ json: string; record: Record1; payload: string }> {
  const secret = await getJson(['get', 'secret', name], opts(ns));
  const json = decodeReleasePayload(Buffer.from(secret.data.release, 'base64'));
  return { json, record: JSON.parse(json) as Record1, payload: secret.data.release as string };
}

/** The record of `revision` as a Kubernetes 1.24 cluster left it: the versions it served then, and a PodSecurityPolicy. */
async function makeStale(ns: string, release: string, revision: number): Promise<string> {
  const name = `sh.helm.release.v1.${release}.v${revision}`;
  const { json, record } = await readRecord(ns, name);
  const psp = [
    '---',
    '# Source: removed-apis/templates/psp.yaml',
    'apiVersion: policy/v1beta1',
    'kind: PodSecurityPolicy',
    'metadata:',
    `  name: ${release}-psp`,
    'spec:',
    '  privileged: false',
    '',
  ].join('\n');
  const stale = record.manifest
    .replace(
      'apiVersion: policy/v1\nkind: PodDisruptionBudget',
      'apiVersion: policy/v1beta1\nkind: PodDisruptionBudget',
    )
    .replace(
      'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler',
      'apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler',
    )
    .concat(psp);
  expect(stale).not.toBe(record.manifest);
  const edited = JSON.stringify({ ...JSON.parse(json), manifest: stale });
  await kubectl(
    [
      'patch',
      'secret',
      name,
      '--type=merge',
      '-p',
      JSON.stringify({ data: { release: encodeReleasePayload(edited).toString('base64') } }),
    ],
    opts(ns),
  );
  return stale;
}

function installer(release: string, ns: string, bin: string, args: string[]) {
  return install(release, ns, ['--chart', chart, '--timeout', '60s', ...args], { HELM_BIN: bin });
}

function plainHelm(bin: string, release: string, ns: string, args: string[]) {
  return execa(bin, ['upgrade', '--install', release, chart, '--namespace', ns, '--timeout', '60s', ...args], {
    env: { KUBECONFIG: kubeconfig() },
    reject: false,
  });
}

/** The versions the release's newest record applied its PDB and HPA at, and that both objects are there. */
async function served(ns: string, release: string, revision: number): Promise<{ pdb: string; hpa: string }> {
  const { record } = await readRecord(ns, `sh.helm.release.v1.${release}.v${revision}`);
  const at = (kind: string) => new RegExp(`apiVersion: (\\S+)\\nkind: ${kind}\\n`).exec(record.manifest)?.[1] ?? 'none';
  await getJson(['get', 'poddisruptionbudget', `${release}-web`], opts(ns));
  await getJson(['get', 'horizontalpodautoscaler', `${release}-web`], opts(ns));
  return { pdb: at('PodDisruptionBudget'), hpa: at('HorizontalPodAutoscaler') };
}

function expectMapped(manifest: string, release: string): void {
  expect(manifest).toContain('apiVersion: policy/v1\nkind: PodDisruptionBudget');
  expect(manifest).toContain('apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler');
  expect(manifest).not.toContain('v1beta1');
  expect(manifest).not.toContain('v2beta2');
  expect(manifest).not.toContain(`${release}-psp`);
}

describe.each([
  ['helm 4', helm4, 'rm-apis-h4'],
  ['helm 3', helm3, 'rm-apis-h3'],
])('removed APIs in the stored record (%s)', (_name, bin, release) => {
  it('plain helm fails on the record every run; the installer maps it, upgrades, and the next same-input run is unchanged', async () => {
    const ns = await fresh(release);
    expect((await installer(release, ns, bin, [])).exitCode).toBe(0);
    const stale = await makeStale(ns, release, 1);

    // Plain helm on the same record and input: fails before it writes a revision, every time.
    const plain = await plainHelm(bin, release, ns, ['--set', 'setting=2']);
    expect(plain.exitCode).toBe(1);
    expect(plain.stderr).toMatch(/current release manifest/);
    expect(plain.stderr).toMatch(
      /no matches for kind "(PodDisruptionBudget|HorizontalPodAutoscaler)" in version "(policy\/v1beta1|autoscaling\/v2beta2)"/,
    );
    expect((await history(release, ns, bin)).map((h) => h.revision)).toEqual([1]);

    // plan names each mapping install would make, and changes nothing.
    const plan = await runCli(
      ['plan', '--release', release, '--namespace', ns, '--chart', chart, '--set', 'setting=2', '-o', 'json'],
      { env: { KUBECONFIG: kubeconfig(), HELM_BIN: bin } },
    );
    expect(plan.exitCode, plan.stderr).toBe(10);
    expect(JSON.parse(plan.stdout).removedApis).toEqual([
      {
        revision: 1,
        kind: 'PodDisruptionBudget',
        name: `${release}-web`,
        from: 'policy/v1beta1',
        to: 'policy/v1',
        removedIn: '1.25',
      },
      {
        revision: 1,
        kind: 'HorizontalPodAutoscaler',
        name: `${release}-web`,
        from: 'autoscaling/v2beta2',
        to: 'autoscaling/v2',
        removedIn: '1.26',
      },
      {
        revision: 1,
        kind: 'PodSecurityPolicy',
        name: `${release}-psp`,
        from: 'policy/v1beta1',
        to: null,
        removedIn: '1.25',
      },
    ]);
    expect((await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest).toBe(stale);

    const run = await installer(release, ns, bin, ['--set', 'setting=2']);
    expect(run.exitCode, run.stderr).toBe(0);
    const copy = `helm-installer.unmapped.${release}.v1`;
    expect(run.stderr).toContain(
      `removed APIs mapped in the stored record of revision 1 (the cluster no longer serves them; the original is kept in Secret ${ns}/${copy}):`,
    );
    expect(run.stderr).toContain(
      `PodDisruptionBudget/${release}-web: policy/v1beta1 -> policy/v1 (policy/v1beta1 removed in Kubernetes 1.25)`,
    );
    expect(run.stderr).toContain(
      `HorizontalPodAutoscaler/${release}-web: autoscaling/v2beta2 -> autoscaling/v2 (autoscaling/v2beta2 removed in Kubernetes 1.26)`,
    );
    expect(run.stderr).toContain(
      `PodSecurityPolicy/${release}-psp: policy/v1beta1 dropped from the record (removed in Kubernetes 1.25 with no successor)`,
    );
    expect((await history(release, ns, bin)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    // Revision 1's record rewritten in place; its original kept, byte for byte what helm read.
    expectMapped((await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest, release);
    const kept = await readRecord(ns, copy);
    expect(kept.record.manifest).toBe(stale);
    expect(await served(ns, release, 2)).toEqual({ pdb: 'policy/v1', hpa: 'autoscaling/v2' });
    const upgraded = (await installerEvents(ns)).filter((e) => e.reason === 'Upgraded').at(-1)!;
    expect(upgraded.note).toContain(
      `removed APIs mapped in the stored record: PodDisruptionBudget/${release}-web policy/v1beta1 -> policy/v1`,
    );

    const again = await installer(release, ns, bin, ['--set', 'setting=2']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain('unchanged');
    expect(again.stderr).not.toContain('removed APIs mapped');
    expect((await history(release, ns, bin)).map((h) => h.revision)).toEqual([1, 2]);

    // The restore command the copy carries (the README's) puts the original record back.
    const restore = (await getJson(['get', 'secret', copy], opts(ns))).metadata.annotations[
      'helm-installer/restore'
    ] as string;
    await execa('sh', ['-c', restore], {
      env: { KUBECONFIG: kubeconfig(), PATH: `${dirname(kubectlBin)}:${process.env.PATH}` },
    });
    expect((await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest).toBe(stale);
  });

  it('SIGKILL during the rewrite: the next run finishes it', async () => {
    const ns = await fresh(`${release}-kill`);
    expect((await installer(release, ns, bin, [])).exitCode).toBe(0);
    const stale = await makeStale(ns, release, 1);
    const args = [
      'install',
      '--release',
      release,
      '--namespace',
      ns,
      '--chart',
      chart,
      '--timeout',
      '60s',
      '--set',
      'setting=2',
    ];
    // Killed the moment its first write (the copy of the original) lands, as close to the record's
    // rewrite as a test can reach from outside: the watch sees the copy appear.
    const watch = execa(
      kubectlBin,
      [
        'get',
        'secrets',
        '--namespace',
        ns,
        '--field-selector',
        `metadata.name=helm-installer.unmapped.${release}.v1`,
        '-w',
        '-o',
        'name',
      ],
      {
        env: { KUBECONFIG: kubeconfig() },
        reject: false,
      },
    );
    const killed = spawnCli(args, { HELM_BIN: bin });
    await killMidRun(killed, new Promise<void>((resolve) => watch.stdout!.on('data', () => resolve())));
    watch.kill();
    // The kill left the record either as it was or rewritten (each write is one request), and no revision.
    const left = (await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest;
    if (left !== stale) expectMapped(left, release);
    expect((await readRecord(ns, `helm-installer.unmapped.${release}.v1`)).record.manifest).toBe(stale);
    console.log(
      `${release}: the SIGKILL left the record ${left === stale ? 'as it was (the copy written)' : 'rewritten'}`,
    );
    expect((await history(release, ns, bin)).map((h) => h.revision)).toEqual([1]);

    const next = await installer(release, ns, bin, ['--set', 'setting=2']);
    expect(next.exitCode, next.stderr).toBe(0);
    expectMapped((await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest, release);
    expect((await readRecord(ns, `helm-installer.unmapped.${release}.v1`)).record.manifest).toBe(stale);
    expect((await history(release, ns, bin)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    expect(await served(ns, release, 2)).toEqual({ pdb: 'policy/v1', hpa: 'autoscaling/v2' });
  });

  it('killed between its two writes (the original kept, the record not yet rewritten): the next run rewrites it and keeps that copy', async () => {
    const ns = await fresh(`${release}-half`);
    expect((await installer(release, ns, bin, [])).exitCode).toBe(0);
    const stale = await makeStale(ns, release, 1);
    const { payload } = await readRecord(ns, `sh.helm.release.v1.${release}.v1`);
    const copy = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'helm-installer/unmapped-release',
      metadata: { name: `helm-installer.unmapped.${release}.v1`, namespace: ns },
      data: { release: payload },
    };
    await kubectl(['create', '-f', '-'], { ...opts(ns), input: JSON.stringify(copy) });

    const next = await installer(release, ns, bin, ['--set', 'setting=2']);
    expect(next.exitCode, next.stderr).toBe(0);
    expectMapped((await readRecord(ns, `sh.helm.release.v1.${release}.v1`)).record.manifest, release);
    expect((await readRecord(ns, `helm-installer.unmapped.${release}.v1`)).record.manifest).toBe(stale);
    expect((await history(release, ns, bin)).at(-1)).toMatchObject({ revision: 2, status: 'deployed' });
  });

  it('a stuck release whose records name removed APIs: both records are mapped before the recovery, whose rollback builds them', async () => {
    const ns = await fresh(`${release}-stuck`);
    expect((await installer(release, ns, bin, [])).exitCode).toBe(0);
    expect((await installer(release, ns, bin, ['--set', 'setting=2'])).exitCode).toBe(0);
    await makeStale(ns, release, 1);
    await makeStale(ns, release, 2);
    await markPending(ns, release, 2);

    const run = await installer(release, ns, bin, ['--set', 'setting=3']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('removed APIs mapped in the stored record of revision 2');
    for (const revision of [1, 2])
      expectMapped((await readRecord(ns, `sh.helm.release.v1.${release}.v${revision}`)).record.manifest, release);
    expect(
      (await history(release, ns, bin)).map((h) => [h.revision, h.status, h.description.startsWith('Rollback to 1')]),
    ).toEqual([
      [1, 'superseded', false],
      [2, 'failed', false],
      [3, 'superseded', true],
      [4, 'deployed', false],
    ]);
  });

  it('a chart that renders an API the cluster does not serve: exit 3 before helm, naming the object, its apiVersion and what the cluster serves', async () => {
    const ns = await fresh(`${release}-new`);
    const plain = await plainHelm(bin, release, ns, ['--set', 'legacyPdb=true']);
    expect(plain.exitCode).toBe(1);
    expect(plain.stderr).toMatch(/no matches for kind "PodDisruptionBudget" in version "policy\/v1beta1"/);
    await execa(bin, ['uninstall', release, '--namespace', ns], { env: { KUBECONFIG: kubeconfig() }, reject: false });

    const run = await installer(release, ns, bin, ['--set', 'legacyPdb=true', '--log-level', 'debug']);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/the chart renders APIs this cluster \(Kubernetes v1\.\d+\.\d+\) no longer serves:/);
    expect(run.stderr).toContain(
      `PodDisruptionBudget/${release}-web (removed-apis/templates/pdb.yaml): apiVersion policy/v1beta1, removed in Kubernetes 1.25; the cluster serves PodDisruptionBudget as policy/v1`,
    );
    expect(run.stderr).not.toContain('Fix the values named above');
    // Before helm: no release, no helm run that changes one.
    expect(await history(release, ns, bin)).toEqual([]);
    expect(run.stdout).not.toMatch(/"msg":"running helm".*"argv":\["upgrade"/);
  });
});
