// Install through helm upgrade's own render (src/render-gate.ts), on the real control plane: bad
// values stop helm before it writes anything (exit 3, nothing changed), and a run that finds the
// release held by another installer stops its helm at the gate and starts over once it may.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { appDir, chartDir, repoRoot } from '../helpers.js';
import { RENDER_GATE_PLUGIN } from '../../src/render-gate.js';
import { helmCalls, history, install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'no-crds');
const source = ['--chart', chart, '--base-values', join(chart, 'values.yaml'), '--log-level', 'debug'];
const opts = () => ({ kubeconfig: kubeconfig() });
const namespace = namespacesDeletedAfterAll();

describe('install through the render gate', () => {
  it('values the chart refuses: exit 3 with the template\'s message, helm stopped in its render, nothing changed', async () => {
    const ns = await namespace('gate-bad-values');
    const r = await install('gated', ns, [...source, '--set', 'broken=true']);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('broken is set: the chart refuses these values');
    expect(r.stdout).toContain(RENDER_GATE_PLUGIN);
    expect(await history('gated', ns)).toEqual([]);
    const left = await kubectl(['get', 'deployments,cronjobs,leases', '--namespace', ns, '-o', 'name'], opts());
    expect(left.stdout.trim()).toBe('');
  });

  it('a namespace that does not exist yet: bad values leave it uncreated (exit 3); good ones create it only once helm\'s render passed the checks', async () => {
    const ns = `${await namespace('gate-new-ns')}-new`;
    const bad = await install('gated', ns, [...source, '--set', 'broken=true']);
    expect(bad.exitCode, bad.stderr).toBe(3);
    expect((await kubectl(['get', 'namespace', ns], { ...opts(), reject: false })).exitCode).not.toBe(0);
    const good = await install('gated', ns, source);
    expect(good.exitCode, good.stderr).toBe(0);
    expect(good.stdout).toContain(RENDER_GATE_PLUGIN);
    const lines = good.stdout.split('\n');
    const created = lines.findIndex((l) => l.includes('namespace created (for the release and its lease)'));
    const checked = lines.findIndex((l) => l.includes('"msg":"rbac preflight"'));
    expect(checked).toBeGreaterThanOrEqual(0);
    expect(created).toBeGreaterThan(checked);
    expect((await history('gated', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    await kubectl(['delete', 'namespace', ns, '--wait=false'], opts());
  });

  it('the release held by another installer: its helm is stopped at the gate, the run waits and starts over, one revision', async () => {
    const ns = await namespace('gate-busy');
    const now = new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'helm-installer-gated', namespace: ns },
      spec: { holderIdentity: 'other-installer/1/abcdef', leaseDurationSeconds: 15, acquireTime: now, renewTime: now },
    };
    await kubectl(['create', '-f', '-'], { ...opts(), input: JSON.stringify(lease) });
    const run = install('gated', ns, source);
    // The other installer finishes (deletes its Lease) a few seconds later.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    await kubectl(['delete', 'lease', 'helm-installer-gated', '--namespace', ns], opts());
    const r = await run;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('another installer holds this release: waiting for it');
    expect(r.stdout).toContain('starting over');
    expect((await history('gated', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
  });

  it("a block scalar ending a template file, which helm 4.1 would change through the gate: checked, then applied without it, as plain helm applies it", async () => {
    const ns = await namespace('gate-newline');
    const r = await install('gated', ns, [...source, '--set', 'script=echo hi']);
    expect(r.exitCode, r.stderr).toBe(0);
    const restart = r.stdout.split('\n').find((l) => l.includes('starting over without it'));
    expect(restart, r.stdout.slice(-3000)).toContain('no-crds/templates/script.yaml');
    // The check ran once, on helm's render at the gate; then a plain helm upgrade, no render of ours.
    expect(r.stdout.split('\n').filter((l) => l.includes('"msg":"rbac preflight"'))).toHaveLength(1);
    const helmRuns = helmCalls(r.stdout);
    expect(helmRuns.map((c) => c.helm)).toEqual(['upgrade', 'upgrade']);
    expect(helmRuns[1]!.argv).not.toContain('--post-renderer');
    const script = await getJson(['get', 'configmap', 'gated-script', '--namespace', ns, '-o', 'json'], opts());
    expect(script.data).toEqual({ 'run.sh': 'echo hi\n' });
    expect((await history('gated', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
  });

  it('a chart that ships crds/ (the bundled chart): its first install renders first, its upgrades go through the gate', async () => {
    const ns = await namespace('gate-crds');
    const customer = join(appDir, 'examples', 'customer-values.yaml');
    const calls = (stdout: string) =>
      helmCalls(stdout).map((c) => `${c.helm} ${c.argv.includes(chartDir) ? 'chart' : ''}${c.argv.includes(RENDER_GATE_PLUGIN) ? ' gated' : ''}`);
    const first = await install('storefront', ns, ['--values', customer, '--log-level', 'debug']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(calls(first.stdout)).toEqual(['template chart', 'upgrade chart']);
    const second = await install('storefront', ns, ['--values', customer, '--set', 'web.replicaCount=2', '--log-level', 'debug']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(calls(second.stdout)).toEqual(['upgrade chart gated']);
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    await kubectl(['delete', 'statefulset,pvc', '--all', '--namespace', ns, '--wait=false'], opts());
  });
});
