// `plan` on the real control plane, through the built CLI: what install would do and to which
// objects, against what the cluster holds (read back with kubectl, never from our own words).
// The peer is what helm users do without a plugin: helm's render through `kubectl diff
// --server-side`; the objects it shows must be the ones ours reports as created or changed.
// Nothing a plan does may change the cluster: every object's resourceVersion is compared.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { kubectlPath } from '../cluster/paths.js';
import { helm3, helm4, repoRoot, runCli, tempDir } from '../helpers.js';
import { history, install, kubeconfig, markPending, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'plan');
const source = ['--chart', chart, '--base-values', join(chart, 'values.yaml')];
const opts = (namespace: string) => ({ kubeconfig: kubeconfig(), namespace });
const newNamespace = namespacesDeletedAfterAll();
const CHANGES = 10;

interface PlanJson {
  decision: { action: string; reason: string };
  summary: Record<string, number>;
  objects: {
    kind: string;
    namespace?: string;
    name: string;
    action: string;
    fields: string[];
    changedBy: string[];
    diff: string;
  }[];
  hooks: { kind: string; name: string; action: string; hook?: string }[];
}

function plan(namespace: string, args: string[] = [], env: Record<string, string> = {}) {
  return runCli(['plan', '--release', 'shop', '--namespace', namespace, ...source, ...args], {
    env: { KUBECONFIG: kubeconfig(), ...env },
  });
}

async function planJson(
  namespace: string,
  args: string[] = [],
): Promise<{ exitCode: number; plan: PlanJson; stdout: string; stderr: string }> {
  const r = await plan(namespace, ['-o', 'json', ...args]);
  if (r.exitCode !== 0 && r.exitCode !== CHANGES) throw new Error(`plan exit ${r.exitCode}: ${r.stderr}`);
  return { ...r, plan: JSON.parse(r.stdout) as PlanJson };
}

/** `Kind/name action [fields] (changed by ...)`, sorted: what a reviewer reads, in one comparable list. */
function changes(p: PlanJson): string[] {
  return p.objects
    .filter((o) => o.action !== 'unchanged')
    .map(
      (o) =>
        `${o.kind}/${o.name} ${o.action}${o.fields.length ? ` ${o.fields.join(',')}` : ''}${o.changedBy.length ? ` (changed by ${o.changedBy.join(',')})` : ''}`,
    )
    .sort();
}

/** Every object's resourceVersion in the namespace (the kinds the chart uses, the Lease, helm's records). */
async function versions(namespace: string): Promise<Record<string, string>> {
  const list = await getJson(
    ['get', 'configmaps,secrets,services,deployments,leases.coordination.k8s.io'],
    opts(namespace),
  );
  return Object.fromEntries(list.items.map((i: any) => [`${i.kind}/${i.metadata.name}`, i.metadata.resourceVersion]));
}

/**
 * The versions once the controllers are done with a hand edit: `kubectl set image` starts a
 * rollout, and the deployment controller goes on writing the Deployment (its revision annotation,
 * its status) for a while; a write of theirs during the plan is not the plan's.
 */
async function settled(namespace: string): Promise<Record<string, string>> {
  await kubectl(['rollout', 'status', 'deployment/web', '--timeout=120s'], { ...opts(namespace), timeoutMs: 130_000 });
  let last = await versions(namespace);
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await versions(namespace);
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error(`namespace ${namespace}: objects still changing 30 s after the rollout`);
}

async function installed(namespace: string, bin = helm4): Promise<void> {
  const r = await install('shop', namespace, [...source, '--helm-bin', bin]);
  expect(r.exitCode, r.stderr).toBe(0);
}

/** The peer: helm's render with the same values, through kubectl diff --server-side; the objects it shows. */
async function kubectlDiffObjects(namespace: string, sets: string[], bin = helm4): Promise<string[]> {
  const rendered = await execa(
    bin,
    [
      'template',
      'shop',
      chart,
      '--namespace',
      namespace,
      '-f',
      join(chart, 'values.yaml'),
      ...sets.flatMap((s) => ['--set', s]),
    ],
    { env: { KUBECONFIG: kubeconfig() } },
  );
  const diff = await execa(
    kubectlPath(),
    ['diff', '--server-side', '--force-conflicts', '--namespace', namespace, '-f', '-'],
    {
      input: rendered.stdout,
      env: { KUBECONFIG: kubeconfig() },
      reject: false,
    },
  );
  if (diff.exitCode !== 0 && diff.exitCode !== 1) throw new Error(`kubectl diff: ${diff.stderr}`);
  // Its headers: `diff -u -N /tmp/LIVE-1/v1.ConfigMap.<ns>.settings /tmp/MERGED-2/v1.ConfigMap.<ns>.settings`.
  const names = [...String(diff.stdout).matchAll(/^diff -u -N \S+\/LIVE-\d+\/(\S+) /gm)].map((m) => {
    const parts = m[1]!.split('.');
    return `${parts.at(-3)}/${parts.at(-1)}`;
  });
  return [...new Set(names)].sort();
}

describe('plan', () => {
  it('a first install into a namespace that does not exist yet: everything to create, exit 10, nothing created', async () => {
    const namespace = `plan-new-${process.pid}-${Date.now() % 100000}`;
    const { exitCode, plan: p } = await planJson(namespace);
    expect(exitCode).toBe(CHANGES);
    expect(p.decision).toEqual({ action: 'install', reason: 'no release yet' });
    expect(changes(p)).toEqual([
      'ConfigMap/cache create',
      'ConfigMap/settings create',
      'Deployment/web create',
      'Secret/creds create',
      'Service/web create',
    ]);
    expect(p.summary).toEqual({ create: 5, change: 0, delete: 0, unchanged: 0 });
    expect(p.hooks.map((h) => `${h.kind}/${h.name} ${h.action} ${h.hook}`)).toEqual([
      'ConfigMap/migrate-marker create pre-install,pre-upgrade',
    ]);
    expect(p.objects.find((o) => o.kind === 'Secret')!.diff).not.toContain('fixture-plan-password');
    const ns = await kubectl(['get', 'namespace', namespace, '--ignore-not-found', '-o', 'name'], {
      kubeconfig: kubeconfig(),
    });
    expect(ns.stdout.trim()).toBe('');
  });

  for (const bin of [helm4, helm3]) {
    const name = bin === helm3 ? 'helm3' : 'helm4';
    it(`${name}: unchanged is exit 0 and changes nothing; a changed value, a hand edit and a dropped template are named, the secret masked, as kubectl diff sees them; the install then changes exactly those`, async () => {
      const namespace = await newNamespace(`plan-${name}`);
      await installed(namespace, bin);
      const before = await versions(namespace);
      const same = await planJson(namespace, ['--helm-bin', bin]);
      expect(same.exitCode, same.stderr).toBe(0);
      expect(same.plan.decision.action).toBe('nothing');
      expect(same.plan.summary).toEqual({ create: 0, change: 0, delete: 0, unchanged: 5 });
      expect(same.plan.hooks).toEqual([]); // nothing runs helm, so no hook runs either
      expect(await versions(namespace)).toEqual(before);

      await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:9.9'], opts(namespace));
      const sets = ['color=green', 'cache=false', 'dbPassword=plan-new-password'];
      const edited = await settled(namespace);
      const r = await planJson(namespace, ['--helm-bin', bin, ...sets.flatMap((s) => ['--set', s])]);
      expect(r.exitCode, r.stderr).toBe(CHANGES);
      expect(r.plan.decision.action).toBe('upgrade');
      expect(changes(r.plan)).toEqual([
        'ConfigMap/cache delete',
        'ConfigMap/settings change /data/color',
        'Deployment/web change /spec/template/spec/containers/0/image (changed by kubectl-set)',
        'Secret/creds change /data/password',
      ]);
      for (const secret of [
        'plan-new-password',
        'fixture-plan-password',
        Buffer.from('plan-new-password').toString('base64'),
        Buffer.from('fixture-plan-password').toString('base64'),
      ]) {
        expect(r.stdout).not.toContain(secret);
        expect(r.stderr).not.toContain(secret);
      }
      expect(await versions(namespace)).toEqual(edited);
      expect((await history('shop', namespace, bin)).length).toBe(1);

      // kubectl diff cannot see deletions (it never had the release's last manifest) nor tell hooks apart.
      const ours = r.plan.objects
        .filter((o) => o.action === 'create' || o.action === 'change')
        .map((o) => `${o.kind}/${o.name}`)
        .sort();
      const peer = (await kubectlDiffObjects(namespace, sets, bin)).filter((o) => o !== 'ConfigMap/migrate-marker');
      expect(peer).toEqual(ours);

      // Then the install itself: what it changed and deleted is what the plan said.
      const upgraded = await install('shop', namespace, [
        ...source,
        '--helm-bin',
        bin,
        ...sets.flatMap((s) => ['--set', s]),
      ]);
      expect(upgraded.exitCode, upgraded.stderr).toBe(0);
      const after = await versions(namespace);
      const chartKinds = (key: string) =>
        !key.startsWith('Lease/') &&
        !key.startsWith('Secret/sh.helm.release') &&
        key !== 'ConfigMap/migrate-marker' &&
        key !== 'ConfigMap/kube-root-ca.crt';
      const touched = Object.keys({ ...edited, ...after })
        .filter(chartKinds)
        .filter((k) => edited[k] !== after[k])
        .sort();
      expect(touched).toEqual(
        [...ours, ...r.plan.objects.filter((o) => o.action === 'delete').map((o) => `${o.kind}/${o.name}`)].sort(),
      );
    });
  }

  it('a field the chart stops setting: plan names it, and the install given no values at all removes it (helm alone would reuse the last values)', async () => {
    const namespace = await newNamespace('plan-dropped-field');
    const chartOnly = ['--release', 'shop', '--namespace', namespace, '--chart', chart];
    const first = await install('shop', namespace, ['--chart', chart, '--set', 'extra=x']);
    expect(first.exitCode, first.stderr).toBe(0);
    const r = await runCli(['plan', ...chartOnly, '-o', 'json'], { env: { KUBECONFIG: kubeconfig() } });
    expect(r.exitCode, r.stderr).toBe(CHANGES);
    expect(changes(JSON.parse(r.stdout) as PlanJson)).toEqual(['ConfigMap/settings change /data/extra']);
    const second = await install('shop', namespace, ['--chart', chart]);
    expect(second.exitCode, second.stderr).toBe(0);
    expect((await getJson(['get', 'configmap', 'settings'], opts(namespace))).data).toEqual({ color: 'blue' });
  });

  it('airgap: the plan shows images as the rewrite will write them (--registry)', async () => {
    const namespace = await newNamespace('plan-airgap');
    await installed(namespace);
    const { exitCode, plan: p } = await planJson(namespace, [
      '--registry',
      'registry.local:5000/app',
      '--skip-preflight',
    ]);
    expect(exitCode).toBe(CHANGES);
    expect(changes(p)).toEqual(['Deployment/web change /spec/template/spec/containers/0/image']);
    const diff = p.objects.find((o) => o.kind === 'Deployment')!.diff;
    expect(diff).toContain(
      '\n-          image: example.invalid/web:1.0\n+          image: registry.local:5000/app/web:1.0\n',
    );
  });

  it('drift alone: correct drift (exit 10), --drift warn: nothing (exit 0); a stuck release: recover', async () => {
    const namespace = await newNamespace('plan-drift');
    await installed(namespace);
    await kubectl(['delete', 'configmap', 'cache'], opts(namespace));
    const correct = await planJson(namespace);
    expect(correct.exitCode).toBe(CHANGES);
    expect(correct.plan.decision).toEqual({
      action: 'correct drift',
      reason: '1 object(s) differ from revision 1: install puts them back, no new revision',
    });
    expect(changes(correct.plan)).toEqual(['ConfigMap/cache create']);
    const warn = await planJson(namespace, ['--drift', 'warn']);
    expect(warn.exitCode).toBe(0);
    expect(warn.plan.decision).toEqual({
      action: 'nothing',
      reason: '1 object(s) differ from revision 1, left as they are (--drift warn)',
    });

    await markPending(namespace, 'shop', 1);
    const stuck = await planJson(namespace);
    expect(stuck.exitCode).toBe(CHANGES);
    expect(stuck.plan.decision).toEqual({
      action: 'recover',
      reason:
        'revision 1 is pending-upgrade (a killed operation): install rolls it back, then decides again on the state below',
    });
  });

  it('HELM_INSTALLER_PLAN_ONLY=true: install prints the plan, writes the count line as its termination message, takes no Lease and changes nothing', async () => {
    const namespace = await newNamespace('plan-only');
    await installed(namespace);
    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:9.9'], opts(namespace));
    const before = await settled(namespace);
    const termination = join(tempDir('plan-only'), 'termination-log');
    const r = await install('shop', namespace, [...source, '--set', 'color=green'], {
      HELM_INSTALLER_PLAN_ONLY: 'true',
      HELM_INSTALLER_TERMINATION_LOG: termination,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('Would upgrade');
    expect(readFileSync(termination, 'utf8')).toBe('plan only: upgrade; 0 to create, 2 to change, 0 to delete\n');
    expect(await versions(namespace)).toEqual(before);
    expect((await history('shop', namespace)).map((h) => h.revision)).toEqual([1]);
  });
});
