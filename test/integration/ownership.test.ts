// Issue 36, item 3, on the real API server with helm 4 and helm 3: a first install whose chart has
// a ConfigMap another helm release owns in that namespace is refused (exit 4) naming the object,
// its release and namespace and the ways out, before any change: no release record, no object of
// ours, the other release's ConfigMap untouched (same resourceVersion, same owner). `plan` marks
// it; `install --dry-run` refuses it too. `--take-ownership always` takes it and says so. Plain helm's --take-ownership on the same
// input adopts it without a word, and its uninstall then deletes the other release's object (what
// the installer no longer lets a first install do). An object no release owns (kubectl apply) is
// adopted. What the cluster holds is read with kubectl and helm, never from the installer's words.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyYaml, getJson, kubectl } from '../cluster/kube.js';
import { helm, helm3, helm4, runCli, tempDir } from '../helpers.js';
import { history, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const dir = tempDir('ownership');
const newNamespace = namespacesDeletedAfterAll();

/** A chart of ConfigMaps, one per name. */
function chart(name: string, configMaps: string[]): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'templates'), { recursive: true });
  writeFileSync(join(root, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 1.0.0\n`);
  for (const cm of configMaps)
    writeFileSync(
      join(root, 'templates', `${cm}.yaml`),
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${cm}\ndata:\n  from: {{ .Chart.Name }}\n`,
    );
  return root;
}
const billing = chart('billing', ['shared']);
const shop = chart('shop', ['shared', 'shop-own']);

const env = (helmBin: string) => ({ KUBECONFIG: kubeconfig(), HELM_BIN: helmBin, HELM_INSTALLER_LOG_FORMAT: 'pretty' });
const shared = async (namespace: string) => {
  const cm = await getJson(['get', 'configmap', 'shared'], { kubeconfig: kubeconfig(), namespace });
  return {
    owner: cm.metadata.annotations?.['meta.helm.sh/release-name'],
    from: cm.data.from,
    resourceVersion: cm.metadata.resourceVersion,
  };
};
const exists = async (namespace: string, name: string) =>
  (await kubectl(['get', 'configmap', name], { kubeconfig: kubeconfig(), namespace, reject: false })).exitCode === 0;

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])("another release's ConfigMap in a first install (%s)", (_name, helmBin) => {
  it('refused before any change, marked by plan; always takes it and says so', async () => {
    const namespace = await newNamespace('owners');
    await helm(helmBin, ['install', 'billing', billing, '-n', namespace], { KUBECONFIG: kubeconfig() });
    const before = await shared(namespace);
    expect([before.owner, before.from]).toEqual(['billing', 'billing']);
    const args = ['--release', 'shop', '--namespace', namespace, '--chart', shop, '--timeout', '60s'];

    const plan = await runCli(['plan', ...args], { env: env(helmBin) });
    expect(plan.exitCode, plan.stderr).toBe(10);
    expect(plan.stdout).toContain(
      'Install would be refused (exit 4): 1 object(s) belong to another release (marked below); nothing would change.\n',
    );
    expect(plan.stdout).toContain(
      `ConfigMap ${namespace}/shared\n    owned by release billing in namespace ${namespace}: install refuses it (exit 4, nothing changed); uninstall it there, or --take-ownership always takes it\n`,
    );

    const dry = await runCli(['install', ...args, '--dry-run'], { env: env(helmBin) });
    expect(dry.exitCode, dry.stderr).toBe(4);
    expect(dry.stderr).toContain(
      `  ConfigMap shared in namespace ${namespace}: owned by release billing in namespace ${namespace}\n`,
    );

    const refused = await runCli(['install', ...args], { env: env(helmBin) });
    expect(refused.exitCode, refused.stderr).toBe(4);
    expect(refused.stderr).toContain(
      `cause: 1 object(s) of release shop (namespace ${namespace}) belong to another helm release; nothing was changed:\n  ConfigMap shared in namespace ${namespace}: owned by release billing in namespace ${namespace}\n`,
    );
    expect(refused.stderr).toContain(
      `next: Uninstall them from their release there (helm uninstall billing -n ${namespace}, or drop them from its chart), or run once with --take-ownership always (HELM_INSTALLER_TAKE_OWNERSHIP=always) to take them over on purpose.`,
    );
    expect(await shared(namespace)).toEqual(before);
    expect(await history('shop', namespace, helmBin)).toEqual([]);
    expect(await exists(namespace, 'shop-own')).toBe(false);

    const taken = await runCli(['install', ...args, '--take-ownership', 'always'], { env: env(helmBin) });
    expect(taken.exitCode, taken.stderr).toBe(0);
    expect(taken.stdout).toContain(
      `--take-ownership always: taking ConfigMap shared in namespace ${namespace} (release billing in namespace ${namespace}) over for release shop; from now on uninstalling shop deletes it, and release billing no longer owns it`,
    );
    const after = await shared(namespace);
    expect([after.owner, after.from]).toEqual(['shop', 'shop']);
  });

  it('plain helm --take-ownership on the same input adopts it silently (the installer refuses); an object no release owns is adopted', async () => {
    const namespace = await newNamespace('owners-helm');
    await helm(helmBin, ['install', 'billing', billing, '-n', namespace], { KUBECONFIG: kubeconfig() });
    const out = await helm(helmBin, ['upgrade', '--install', 'shop', shop, '-n', namespace, '--take-ownership'], {
      KUBECONFIG: kubeconfig(),
    });
    expect(out).not.toContain('billing');
    expect((await shared(namespace)).owner).toBe('shop');
    // And its uninstall deletes what was the other release's.
    await helm(helmBin, ['uninstall', 'shop', '-n', namespace, '--wait'], { KUBECONFIG: kubeconfig() });
    expect(await exists(namespace, 'shared')).toBe(false);

    const applied = await newNamespace('owners-applied');
    await applyYaml('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  from: kubectl\n', {
      kubeconfig: kubeconfig(),
      namespace: applied,
    });
    const r = await runCli(
      ['install', '--release', 'shop', '--namespace', applied, '--chart', shop, '--timeout', '60s'],
      { env: env(helmBin) },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `adopting ConfigMap shared in namespace ${applied}: no release owns it (--take-ownership first-install)`,
    );
    expect((await shared(applied)).owner).toBe('shop');
  });
});
