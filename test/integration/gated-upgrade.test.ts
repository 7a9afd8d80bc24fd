// install's quick way against the real control plane: helm upgrade starts before the checks and
// waits at the render gate. A first install whose CRDs are not in the cluster yet is stopped there
// (helm ran with --skip-crds, so nothing was created) and goes the usual way; once they exist it
// goes through. A release that changes while helm waits for the Lease is not overwritten by a
// helm that read it before: helm is stopped at the gate and the run upgrades the usual way.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createNamespace, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { cliPath, helm4, tempDir } from '../helpers.js';
import { history, install, kubeconfig } from './cluster-helpers.js';

const opts = () => ({ kubeconfig: kubeconfig() });

/** A chart with one CRD of its own (a group no other test uses) and a custom resource of it. */
function crdChart(group: string): string {
  const dir = join(tempDir('gated'), 'gadgets');
  mkdirSync(join(dir, 'crds'), { recursive: true });
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), 'apiVersion: v2\nname: gadgets\nversion: 0.1.0\n');
  writeFileSync(join(dir, 'values.yaml'), 'size: small\n');
  writeFileSync(
    join(dir, 'crds', 'gadgets.yaml'),
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
  );
  writeFileSync(
    join(dir, 'templates', 'gadget.yaml'),
    `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  size: {{ .Values.size | quote }}\n`,
  );
  writeFileSync(join(dir, 'templates', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  size: {{ .Values.size | quote }}\n');
  return dir;
}

/** The argv of each helm the run started, from its debug log. */
function helmArgvs(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { argv?: string[] })
    .filter((l) => l.argv)
    .map((l) => l.argv!);
}

describe('the render gate (install, helm 4)', () => {
  it("a first install whose CRDs are not in the cluster: stopped at the gate, installed the usual way (helm creates the CRD); the next first install goes through the gate", async () => {
    const group = `gated-${Date.now().toString(36)}.example.com`;
    const chart = crdChart(group);
    const ns = await createNamespace('gated-crd', opts());
    const first = await install('gadgets', ns, ['--chart', chart, '--log-level', 'debug']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain(`CRDs not in the cluster yet: gadgets.${group}`);
    const upgrades = helmArgvs(first.stdout).filter((a) => a[0] === 'upgrade');
    // The gated helm (--skip-crds, the gate), then the usual one, which creates the CRD.
    expect(upgrades).toHaveLength(2);
    expect(upgrades[0]).toEqual(expect.arrayContaining(['--skip-crds', '--post-renderer', 'helm-installer-gate']));
    expect(upgrades[1]).not.toContain('--skip-crds');
    expect(upgrades[1]).not.toContain('helm-installer-gate');
    expect((await history('gadgets', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    expect((await getJson(['get', `gadgets.${group}`, 'gadgets'], { ...opts(), namespace: ns })).spec).toEqual({ size: 'small' });

    // The CRD exists now: the next first install goes through the gate, once.
    const ns2 = await createNamespace('gated-crd2', opts());
    const second = await install('gadgets', ns2, ['--chart', chart, '--log-level', 'debug']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).not.toContain('stopped at the render gate');
    const through = helmArgvs(second.stdout).filter((a) => a[0] === 'upgrade');
    expect(through).toHaveLength(1);
    expect(through[0]).toEqual(expect.arrayContaining(['--skip-crds', '--post-renderer', 'helm-installer-gate']));
    expect(helmArgvs(second.stdout).filter((a) => a[0] === 'template' && a[1] === 'gadgets')).toEqual([]);
    expect((await history('gadgets', ns2)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    expect((await getJson(['get', `gadgets.${group}`, 'gadgets'], { ...opts(), namespace: ns2 })).spec).toEqual({ size: 'small' });
    // helm started before its merge of the values was known: the values digest was added to
    // the record afterwards, where helm keeps release labels (its `get metadata` shows them).
    const meta = JSON.parse((await execa(helm4, ['get', 'metadata', 'gadgets', '-n', ns2, '-o', 'json'], { env: { KUBECONFIG: kubeconfig() } })).stdout);
    expect(meta.labels['helm-installer/values-digest']).toMatch(/^[0-9a-f]{40}$/);
    // ... and it is the digest the usual way gives for the same chart and values.
    const usual = JSON.parse((await execa(helm4, ['get', 'metadata', 'gadgets', '-n', ns, '-o', 'json'], { env: { KUBECONFIG: kubeconfig() } })).stdout);
    expect(meta.labels['helm-installer/values-digest']).toBe(usual.labels['helm-installer/values-digest']);
    // So the same install again is a no-op.
    const again = await install('gadgets', ns2, ['--chart', chart]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/unchanged/);
  });

  it('the release changes while helm waits at the gate for the Lease: helm is stopped there, and the run upgrades the usual way on top of the change', async () => {
    const group = `gated-${Date.now().toString(36)}.example.com`;
    const chart = crdChart(group);
    const ns = await createNamespace('gated-race', opts());
    expect((await install('gadgets', ns, ['--chart', chart])).exitCode).toBe(0);
    const micro = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/Z$/, '000Z');
    // Another installer holds the release (renewed a minute ahead: held until deleted).
    await kubectl(['apply', '-f', '-'], {
      ...opts(),
      input: JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'helm-installer-gadgets', namespace: ns },
        spec: { holderIdentity: 'other-installer/7/abcdef', leaseDurationSeconds: 15, acquireTime: micro(60_000), renewTime: micro(60_000) },
      }),
    });
    const run = execa(process.execPath, [cliPath, 'install', '--release', 'gadgets', '--namespace', ns, '--chart', chart, '--set', 'size=large', '--log-level', 'debug', '--timeout', '120s'], {
      env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: '/nonexistent/termination-log' },
      reject: false,
    });
    let seen = '';
    run.stdout!.on('data', (c: Buffer) => (seen += c.toString()));
    await waitFor('the run to wait for the Lease with helm at the gate', () => seen.includes('another installer holds this release') && seen.includes('"msg":"rbac preflight"'), {
      timeoutMs: 90_000,
      intervalMs: 100,
    });
    // Meanwhile the other installer upgrades (revision 2), then lets go.
    await execa(helm4, ['upgrade', 'gadgets', chart, '-n', ns, '--set', 'size=medium', '--wait'], { env: { KUBECONFIG: kubeconfig() } });
    await kubectl(['delete', 'lease', 'helm-installer-gadgets'], { ...opts(), namespace: ns });
    const r = await run;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout)).toContain('the release changed before the Lease was held');
    // No revision written by the stopped helm: 1 and 2, then this run's upgrade.
    expect((await history('gadgets', ns)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'superseded'],
      [3, 'deployed'],
    ]);
    expect((await getJson(['get', `gadgets.${group}`, 'gadgets'], { ...opts(), namespace: ns })).spec).toEqual({ size: 'large' });
  });
});
