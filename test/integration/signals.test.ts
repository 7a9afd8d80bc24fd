// SIGTERM to the installer (a pod being deleted) is forwarded to helm and awaited: the release is
// left failed or rolled back, never pending, and the exit code says a retry helps.
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { createNamespace, waitFor } from '../cluster/kube.js';
import { cliPath } from '../helpers.js';
import { history, install, kubeconfig } from './cluster-helpers.js';

describe('signals', () => {
  it('SIGTERM mid-upgrade: helm stops cleanly, the release is not left pending, exit 5', async () => {
    const ns = await createNamespace('sigterm', { kubeconfig: kubeconfig() });
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const child = execa(
      process.execPath,
      [cliPath, 'install', '--release', 'storefront', '--namespace', ns, '--timeout', '5m', '--set', 'web.nodeSelector.zone=nowhere'],
      { env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: join(ns, 'none') }, reject: false },
    );
    await waitFor('the upgrade to start', async () => (await history('storefront', ns)).at(-1)?.status === 'pending-upgrade', {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(5);
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
