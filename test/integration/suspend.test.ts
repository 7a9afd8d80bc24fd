// Suspend (HELM_INSTALLER_SUSPEND=true) on the real API server: a maintenance window changes
// nothing, for one chart and for a release plan. What the cluster holds is read with kubectl:
// every object's resourceVersion (the Lease included), helm's history.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { repoRoot, runCli } from '../helpers.js';
import { history, install, installerEvents, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'plan');
const source = ['--chart', chart, '--base-values', join(chart, 'values.yaml')];
const opts = (namespace: string) => ({ kubeconfig: kubeconfig(), namespace });
const newNamespace = namespacesDeletedAfterAll();

/** Every object's resourceVersion in the namespace, once the controllers have settled. */
async function versions(namespace: string): Promise<Record<string, string>> {
  await kubectl(['rollout', 'status', 'deployment/web', '--timeout=120s'], { ...opts(namespace), timeoutMs: 130_000 });
  const list = await getJson(
    ['get', 'configmaps,secrets,services,deployments,leases.coordination.k8s.io'],
    opts(namespace),
  );
  return Object.fromEntries(list.items.map((i: any) => [`${i.kind}/${i.metadata.name}`, i.metadata.resourceVersion]));
}

describe('suspend', () => {
  it('changes nothing (not even the Lease), even with new values and a hand edit to put back; exit 0 and says so', async () => {
    const namespace = await newNamespace('suspend');
    const first = await install('shop', namespace, source);
    expect(first.exitCode, first.stderr).toBe(0);
    await kubectl(['delete', 'configmap', 'settings'], opts(namespace));
    const before = await versions(namespace);
    const r = await install('shop', namespace, [...source, '--set', 'color=green'], { HELM_INSTALLER_SUSPEND: 'true' });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`helm-installer: suspended; nothing changed (${namespace}/shop)`);
    expect(await versions(namespace)).toEqual(before);
    expect((await history('shop', namespace)).map((h) => h.revision)).toEqual([1]);
    const note =
      'suspended (HELM_INSTALLER_SUSPEND=true): nothing read, changed or removed; unset it and redeploy to resume';
    expect((await installerEvents(namespace)).map((e) => [e.reason, e.type, e.note])).toEqual([
      ['Installed', 'Normal', `release ${namespace}/shop: installed as revision 1 (chart plan-0.1.0)`],
      ['Suspended', 'Normal', `release ${namespace}/shop: ${note}`],
    ]);
    // Resumed: the next run puts the deleted object back and upgrades.
    const resumed = await install('shop', namespace, [...source, '--set', 'color=green']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect((await getJson(['get', 'configmap', 'settings'], opts(namespace))).data.color).toBe('green');
  });

  it('a release plan: no release is touched, each is named', async () => {
    const namespace = await newNamespace('suspend-plan');
    const app = join(repoRoot, 'test', 'fixtures', 'release-plan');
    const r = await runCli(['install', '--app-dir', app, '--namespace', namespace, '--suspend'], {
      env: { KUBECONFIG: kubeconfig() },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `helm-installer: suspended; nothing changed (${namespace}/operator, ${namespace}/web, ${namespace}/report, ${namespace}/cache)`,
    );
    const left = await getJson(['get', 'configmaps,secrets,deployments,leases.coordination.k8s.io'], opts(namespace));
    expect(left.items.map((i: any) => `${i.kind}/${i.metadata.name}`)).toEqual(['ConfigMap/kube-root-ca.crt']);
  });
});
