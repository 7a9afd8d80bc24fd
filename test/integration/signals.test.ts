// SIGTERM to the installer (a pod being deleted) is forwarded to helm and awaited: the release is
// left failed or rolled back, never pending, and the exit code says a retry helps.
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createNamespace, getJson, waitFor } from '../cluster/kube.js';
import { cliPath } from '../helpers.js';
import { history, install, kubeconfig } from './cluster-helpers.js';

describe('signals', () => {
  it('SIGTERM mid-upgrade: a concurrent run is refused as busy (7); helm stops cleanly, the release is not left pending, exit 5', async () => {
    const ns = await createNamespace('sigterm', { kubeconfig: kubeconfig() });
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const child = execa(
      process.execPath,
      [cliPath, 'install', '--release', 'storefront', '--namespace', ns, '--timeout', '5m', '--set', 'web.nodeSelector.zone=nowhere'],
      // No SIGKILL after the SIGTERM: the rollback helm then does may take longer than execa's default 5 s.
      { env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: join(ns, 'none') }, reject: false, forceKillAfterDelay: false },
    );
    // SIGTERM while helm waits for the unready Deployment (its change applied). Earlier, helm 4
    // can race its own cancelled apply against the rollback (the rollback then waits out the
    // timeout), which is helm's behaviour, not the installer's.
    await waitFor(
      'the upgrade to be applied and waiting',
      async () => {
        if ((await history('storefront', ns)).at(-1)?.status !== 'pending-upgrade') return false;
        const web = await getJson(['get', 'deployment', 'storefront-web'], { namespace: ns, kubeconfig: kubeconfig() });
        return web.spec.template.spec.nodeSelector?.zone === 'nowhere';
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    // Meanwhile a second installer finds the release held: exit 7, and it touches nothing.
    const second = await install('storefront', ns, ['--set', 'web.replicaCount=2']);
    expect(second.exitCode, second.stderr).toBe(7);
    expect(second.stderr).toMatch(/release storefront is pending-upgrade/);
    expect((await history('storefront', ns)).length).toBe(2);

    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, `signal ${r.signal}\n${String(r.stdout).slice(-1500)}\n${String(r.stderr)}`).toBe(5);
    expect(String(r.stderr)).toMatch(/interrupted/);
    expect(String(r.stdout)).toMatch(/signal received/);
    const h = await history('storefront', ns);
    expect(h.map((x) => x.status)).not.toContain('pending-upgrade');
    expect(h.at(-1)!.status).toMatch(/^(failed|deployed)$/);
    // And the next run simply works.
    const again = await install('storefront', ns);
    expect(again.exitCode, again.stderr).toBe(0);
  });
});
