// Drift through `install` on the real control plane: the fixture chart installed by the built CLI,
// then changed the way people change things (kubectl set image, set env, scale, patch, annotate,
// edit, delete), in two namespaces. `--drift correct` puts it back and the next run is a no-op;
// `warn` names it and changes nothing; `off` skips as before drift existed. An upgrade and a
// rollback after hand edits succeed (helm 4's server-side apply conflicts are taken back), and
// ignored fields keep what their owner set. Expected values are written out from each edit.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { kubectlPath } from '../cluster/paths.js';
import { helm3, repoRoot, tempDir } from '../helpers.js';
import { history, install, kubeconfig, markPending, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'drift');
const opts = (namespace?: string) => ({ kubeconfig: kubeconfig(), ...(namespace ? { namespace } : {}) });
const newNamespace = namespacesDeletedAfterAll();
const IGNORE = 'Deployment/web:/spec/replicas,/metadata/annotations/example.com~1team';

function source(other: string, extra: string[] = []): string[] {
  return ['--chart', chart, '--base-values', join(chart, 'values.yaml'), '--set', `otherNamespace=${other}`, ...extra];
}

/** What the edits below change, read from the cluster. */
async function observed(ns: string, other: string): Promise<Record<string, unknown>> {
  const web = await getJson(['get', 'deployment', 'web'], opts(ns));
  const container = web.spec.template.spec.containers[0];
  const exists = async (args: string[], namespace: string) =>
    (await kubectl(['get', ...args, '--ignore-not-found', '-o', 'name'], opts(namespace))).stdout.trim() !== '';
  return {
    image: container.image,
    mode: container.env.find((e: { name: string }) => e.name === 'MODE').value,
    replicas: web.spec.replicas,
    team: web.metadata.annotations['example.com/team'],
    color: (await getJson(['get', 'configmap', 'settings'], opts(ns))).data.color,
    port: (await getJson(['get', 'service', 'web'], opts(ns))).spec.ports[0].port,
    cache: await exists(['configmap', 'cache'], ns),
    remote: await exists(['configmap', 'remote'], other),
  };
}

const asInstalled = {
  image: 'example.invalid/web:1.0',
  mode: 'prod',
  replicas: 2,
  team: 'core',
  color: 'blue',
  port: 80,
  cache: true,
  remote: true,
};

/** Every kind of hand edit the issue names, on one release. */
async function editByHand(ns: string, other: string): Promise<void> {
  const k = (args: string[], namespace = ns) => kubectl(args, opts(namespace));
  await k(['set', 'image', 'deployment/web', 'web=example.invalid/web:9.9']);
  await k(['set', 'env', 'deployment/web', 'MODE=debug']);
  await k(['scale', 'deployment/web', '--replicas=5']);
  await k(['annotate', '--overwrite', 'deployment/web', 'example.com/team=platform']);
  await k(['patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"color":"red"}}']);
  await k([
    'patch',
    'service',
    'web',
    '--type=json',
    '-p',
    '[{"op":"replace","path":"/spec/ports/0/port","value":81}]',
  ]);
  await k(['delete', 'configmap', 'cache']);
  await k(['delete', 'configmap', 'remote'], other);
}
const edited = {
  image: 'example.invalid/web:9.9',
  mode: 'debug',
  replicas: 5,
  team: 'platform',
  color: 'red',
  port: 81,
  cache: false,
  remote: false,
};

async function namespaces(prefix: string): Promise<[string, string]> {
  return [await newNamespace(prefix), await newNamespace(`${prefix}-other`)];
}

describe('install --drift', () => {
  for (const helm of ['helm4', 'helm3'] as const) {
    it(`${helm}: warn names every drifted object and changes nothing; correct puts it back (ignored fields kept); then a no-op`, async () => {
      const [ns, other] = await namespaces(`drift-${helm}`);
      const bin = helm === 'helm3' ? ['--helm-bin', helm3] : [];
      const first = await install('shop', ns, [...source(other), ...bin]);
      expect(first.exitCode, first.stderr).toBe(0);
      expect(await observed(ns, other)).toEqual(asInstalled);
      await editByHand(ns, other);
      await rolledOut(ns);
      expect(await observed(ns, other)).toEqual(edited);

      const warned = await install('shop', ns, [...source(other), ...bin, '--drift', 'warn']);
      expect(warned.exitCode, warned.stderr).toBe(0);
      expect(warned.stderr).toContain('drift found, left as it is (--drift warn):');
      for (const line of [
        'ConfigMap/' + ns + '/cache: missing',
        'ConfigMap/' + other + '/remote: missing',
        'ConfigMap/' + ns + '/settings: /data/color (changed by kubectl-patch)',
        'Service/' + ns + '/web: /spec/ports/0/port (changed by kubectl-patch)',
      ]) {
        expect(warned.stderr).toContain(line);
      }
      expect(warned.stderr).toMatch(
        new RegExp(`Deployment/${ns}/web: .*/spec/template/spec/containers/0/image \\(changed by kubectl-set\\)`),
      );
      expect(await observed(ns, other)).toEqual(edited);

      const corrected = await install('shop', ns, [...source(other), ...bin, '--drift-ignore', IGNORE]);
      expect(corrected.exitCode, corrected.stderr).toBe(0);
      expect(corrected.stderr).toMatch(/^helm-installer: drift corrected in release shop in namespace /m);
      expect(await observed(ns, other)).toEqual({ ...asInstalled, replicas: 5, team: 'platform' });
      expect((await history('shop', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);

      // Ready again after the image came back: the next run has nothing to do.
      await rolledOut(ns);
      const again = await install('shop', ns, [...source(other), ...bin, '--drift-ignore', IGNORE]);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/^helm-installer: unchanged release shop in namespace /m);
      expect(again.stdout).not.toContain('running helm upgrade --install');

      // off: as before drift existed, an unchanged release is left alone whatever was edited.
      await kubectl(['delete', 'configmap', 'cache'], opts(ns));
      const off = await install('shop', ns, [...source(other), ...bin], { HELM_INSTALLER_DRIFT: 'off' });
      expect(off.exitCode, off.stderr).toBe(0);
      expect(off.stderr).toMatch(/^helm-installer: unchanged release shop/m);
      expect((await observed(ns, other)).cache).toBe(false);
    });
  }

  it('a whole Deployment and a Service deleted: recreated, no new revision; the scale without an ignore rule is taken back', async () => {
    const [ns, other] = await namespaces('drift-deleted');
    expect((await install('shop', ns, source(other))).exitCode).toBe(0);
    await kubectl(['delete', 'deployment', 'web'], opts(ns));
    await kubectl(['delete', 'service', 'db'], opts(ns));
    const r = await install('shop', ns, source(other));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Deployment/${ns}/web: missing`);
    expect(r.stderr).toContain(`Service/${ns}/db: missing`);
    expect(await observed(ns, other)).toEqual(asInstalled);
    expect((await getJson(['get', 'service', 'db'], opts(ns))).spec.clusterIP).toBe('None');
    await rolledOut(ns);
    await kubectl(['scale', 'deployment/web', '--replicas=4'], opts(ns));
    const scaled = await install('shop', ns, source(other));
    expect(scaled.exitCode, scaled.stderr).toBe(0);
    expect(scaled.stderr).toMatch(new RegExp(`Deployment/${ns}/web: /spec/replicas \\(changed by kubectl\\S*\\)`));
    expect((await observed(ns, other)).replicas).toBe(2);
    expect((await history('shop', ns)).map((h) => h.revision)).toEqual([1]);
  });

  it('hand edits, then an upgrade with a changed value and a rollback (recovery): both succeed, the chart wins, ignored fields keep theirs', async () => {
    const [ns, other] = await namespaces('drift-upgrade');
    expect((await install('shop', ns, source(other))).exitCode).toBe(0);
    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:9.9'], opts(ns));
    await kubectl(['scale', 'deployment/web', '--replicas=5'], opts(ns));
    await kubectlEdit(['configmap', 'settings', '--namespace', ns], 's/color: blue/color: red/');
    const upgraded = await install('shop', ns, [...source(other, ['--set', 'mode=staging']), '--drift-ignore', IGNORE]);
    expect(upgraded.exitCode, upgraded.stderr).toBe(0);
    expect(upgraded.stderr).toMatch(/^helm-installer: upgraded release shop/m);
    expect(upgraded.stderr).toContain('the upgrade also put back what had drifted:');
    expect(upgraded.stderr).toContain(`ConfigMap/${ns}/settings: /data/color (changed by kubectl-edit)`);
    expect(await observed(ns, other)).toEqual({ ...asInstalled, mode: 'staging', replicas: 5 });

    // The rollback helm runs to recover a stuck upgrade, after another hand edit: it succeeds too.
    await kubectl(['set', 'image', 'deployment/web', 'web=example.invalid/web:7.7'], opts(ns));
    await markPending(ns, 'shop', 2);
    const recovered = await install('shop', ns, [
      ...source(other, ['--set', 'mode=staging']),
      '--drift-ignore',
      IGNORE,
    ]);
    expect(recovered.exitCode, recovered.stderr).toBe(0);
    expect((await history('shop', ns)).map((h) => h.status)).toEqual([
      'superseded',
      'failed',
      'superseded',
      'deployed',
    ]);
    expect(await observed(ns, other)).toEqual({ ...asInstalled, mode: 'staging', replicas: 5 });
  });

  it('drift in an object the new chart drops is not drift: helm deletes it, the summary does not name it', async () => {
    const [ns, other] = await namespaces('drift-dropped');
    expect((await install('shop', ns, source(other))).exitCode).toBe(0);
    await kubectl(['patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"color":"red"}}'], opts(ns));
    await kubectl(['delete', 'configmap', 'cache'], opts(ns));
    // The next chart version drops the settings ConfigMap (and keeps cache).
    const next = join(tempDir('drift-next'), 'drift');
    cpSync(chart, next, { recursive: true });
    writeFileSync(
      join(next, 'templates', 'configmaps.yaml'),
      readFileSync(join(chart, 'templates', 'configmaps.yaml'), 'utf8')
        .split('---\n')
        .slice(1)
        .join('---\n'),
    );
    const r = await install('shop', ns, [
      '--chart',
      next,
      '--base-values',
      join(chart, 'values.yaml'),
      '--set',
      `otherNamespace=${other}`,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^helm-installer: upgraded release shop/m);
    expect(r.stderr).toContain(`ConfigMap/${ns}/cache: missing`);
    expect(r.stderr).not.toContain('settings');
    expect(
      (await kubectl(['get', 'configmap', 'settings', '--ignore-not-found', '-o', 'name'], opts(ns))).stdout.trim(),
    ).toBe('');
    expect((await kubectl(['get', 'configmap', 'cache', '-o', 'name'], opts(ns))).stdout.trim()).toBe(
      'configmap/cache',
    );
  });

  it('an immutable field changed by hand (a headless Service recreated with a clusterIP): named, helm tried, exit 4 naming the field', async () => {
    const [ns, other] = await namespaces('drift-immutable');
    expect((await install('shop', ns, source(other))).exitCode).toBe(0);
    const db = await getJson(['get', 'service', 'db'], opts(ns));
    await kubectl(['delete', 'service', 'db'], opts(ns));
    delete db.spec.clusterIP;
    delete db.spec.clusterIPs;
    delete db.metadata.resourceVersion;
    delete db.metadata.uid;
    delete db.metadata.managedFields;
    await kubectl(['create', '-f', '-'], { ...opts(ns), input: JSON.stringify(db) });
    const r = await install('shop', ns, source(other));
    expect(r.exitCode, r.stderr).toBe(4);
    expect(r.stderr).toContain('drift that could not be put back before this upgrade:');
    expect(r.stderr).toMatch(
      new RegExp(`^  Service/${ns}/db: spec\\.clusterIPs?(\\[0\\])?: .*(immutable|may not change)`, 'm'),
    );
    expect(r.stderr).toContain(
      'next: Delete each object named above as drifted (the next run creates it again as the release has it), then run again.',
    );
    expect(r.stdout).toContain(`cannot be put back as it was: Service/${ns}/db`);
  });

  it('bad ignore rules: exit 2 naming the option and its variable, before any cluster call', async () => {
    const r = await install('shop', 'default', ['--chart', chart, '--drift-ignore', 'Deployment/web:spec/replicas']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'cause: invalid --drift-ignore "Deployment/web:spec/replicas" (or env HELM_INSTALLER_DRIFT_IGNORE): invalid drift ignore rule "Deployment/web:spec/replicas": path "spec/replicas" is not a JSON pointer',
    );
    const file = join(tempDir('drift-rules'), 'rules.yaml');
    writeFileSync(file, '- paths: [/spec/replicas]\n- target: {kind: Deployment}\n');
    const f = await install('shop', 'default', ['--chart', chart], { HELM_INSTALLER_DRIFT_IGNORE_FILE: file });
    expect(f.exitCode).toBe(2);
    expect(f.stderr).toContain('HELM_INSTALLER_DRIFT_IGNORE_FILE');
    expect(f.stderr).toContain(`(env for --drift-ignore-file): ${file} line 2: a rule needs "paths"`);
    const mode = await install('shop', 'default', ['--chart', chart, '--drift', 'fix']);
    expect(mode.exitCode).toBe(2);
    expect(mode.stderr).toContain('expected correct, warn or off');
  });
});

/** Waits until the web Deployment's rollout is done (KWOK makes its pods ready). */
async function rolledOut(ns: string): Promise<void> {
  await kubectl(['rollout', 'status', 'deployment/web', '--timeout=120s'], { ...opts(ns), timeoutMs: 130_000 });
}

/** `kubectl edit` with a scripted editor: what a person does in vi, as kubectl records it. */
async function kubectlEdit(args: string[], sed: string): Promise<void> {
  const editor = join(tempDir('drift-editor'), 'editor.sh');
  writeFileSync(editor, `#!/bin/sh\nsed -i '${sed}' "$1"\n`, { mode: 0o755 });
  await execa(kubectlPath(), ['edit', ...args], { env: { KUBECONFIG: kubeconfig(), KUBE_EDITOR: editor } });
}
