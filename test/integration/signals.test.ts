// SIGTERM to the installer (a pod being deleted) is forwarded to helm and awaited: the release is
// left failed or rolled back, never pending, and the exit code says a retry helps.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNamespace, getJson, kubectl } from '../cluster/kube.js';
import { helm4, tempDir } from '../helpers.js';
import {
  copyChart,
  history,
  install,
  killMidRun,
  kubeconfig,
  spawnStorefront,
  waitForRelease,
  webUnschedulable,
} from './cluster-helpers.js';

describe('signals', () => {
  it('SIGTERM mid-upgrade: a concurrent run is refused as busy (7); helm stops cleanly, the release is not left pending, exit 5', async () => {
    const ns = await createNamespace('sigterm', { kubeconfig: kubeconfig() });
    expect((await install('storefront', ns)).exitCode).toBe(0);
    // No SIGKILL after the SIGTERM: the rollback helm then does may take longer than execa's default 5 s.
    const run = startInstaller(ns, ['--timeout', '5m', '--set', 'web.nodeSelector.zone=nowhere']);
    const { child } = run;
    // SIGTERM while helm waits for the unready Deployment (its change applied). Earlier, helm 4
    // can race its own cancelled apply against the rollback (the rollback then waits out the
    // timeout), which is helm's behaviour, not the installer's.
    await waitForRelease(
      'storefront',
      ns,
      { status: 'pending-upgrade' },
      { run, also: webUnschedulable(ns), timeoutMs: 60_000 },
    );
    // Meanwhile a second installer finds the release's Lease held: exit 7 after its short wait,
    // and it touches nothing.
    const second = await install('storefront', ns, ['--set', 'web.replicaCount=3'], {
      HELM_INSTALLER_LOCK_TIMEOUT: '2s',
    });
    expect(second.exitCode, second.stderr).toBe(7);
    expect(second.stderr).toMatch(
      new RegExp(
        `release storefront is busy: installer [^ ]+/${child.pid}/[0-9a-f]{6} holds Lease ${ns}/helm-installer-storefront`,
      ),
    );
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

/** The storefront chart alone (the bundled app is a release plan); a case's --chart wins. */
function startInstaller(ns: string, args: string[], env: Record<string, string> = {}) {
  return spawnStorefront(ns, args, { HELM_INSTALLER_TERMINATION_LOG: join(ns, 'none'), ...env });
}

describe('signals at every stage', () => {
  it('SIGTERM while helm renders: helm stopped, exit 5, nothing installed, no Lease or namespace left', async () => {
    // A namespace the run must create for its Lease: the render check comes first (in an existing
    // namespace helm's own upgrade renders, with no separate check).
    const ns = `sigterm-render-${Date.now().toString(36)}`;
    // A template that keeps helm busy for about a minute on a quiet machine (1.3 billion empty
    // iterations; 64 million took 2.9 s), so stopping within the bound below is the signal's doing
    // and the bound can be loose enough for a loaded machine.
    const slow = copyChart((dir) =>
      writeFileSync(
        join(dir, 'templates', 'slow.yaml'),
        '{{- range until 36000 }}{{- range until 36000 }}{{- end }}{{- end }}\n',
      ),
    );
    const run = startInstaller(ns, ['--chart', slow, '--log-level', 'debug']);
    // The render check's helm call (the values probe before it renders another chart).
    const { seen: sent, result: r } = await killMidRun(
      run,
      run.logged(`"argv":["template","storefront","${slow}"`).then(() => Date.now()),
      'SIGTERM',
    );
    expect(r.exitCode, String(r.stderr)).toBe(5);
    // Not a speed figure: far below the minute the render would take, with room for a loaded machine.
    expect(Date.now() - sent).toBeLessThan(20_000);
    expect(String(r.stderr)).toMatch(/action: render check/);
    expect(String(r.stderr)).toMatch(/interrupted/);
    expect(await history('storefront', ns)).toEqual([]);
    const lease = await kubectl(['get', 'lease', 'helm-installer-storefront'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
      reject: false,
    });
    expect(lease.exitCode).not.toBe(0);
    expect((await kubectl(['get', 'namespace', ns], { kubeconfig: kubeconfig(), reject: false })).exitCode).not.toBe(0);
  });

  it('SIGTERM while waiting for the Lease: exit 5 at once, the holder and the release untouched', async () => {
    const ns = await createNamespace('sigterm-lease', { kubeconfig: kubeconfig() });
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const micro = () => new Date(Date.now() + 60_000).toISOString().replace(/Z$/, '000Z');
    // A holder that renewed a minute in the future (a fast clock): held for the whole test.
    await kubectl(['apply', '-f', '-'], {
      kubeconfig: kubeconfig(),
      input: JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'helm-installer-storefront', namespace: ns },
        spec: {
          holderIdentity: 'other-installer/7/abcdef',
          leaseDurationSeconds: 15,
          acquireTime: micro(),
          renewTime: micro(),
        },
      }),
    });
    const run = startInstaller(ns, ['--set', 'web.replicaCount=3'], {
      HELM_INSTALLER_LOCK_TIMEOUT: '5m',
    });
    await run.logged('another installer holds this release: waiting for it');
    // The render and the RBAC preflight run beside the wait: done, so the wait is all that is left.
    const { seen: sent, result: r } = await killMidRun(
      run,
      run.logged('"msg":"rbac preflight"').then(() => Date.now()),
      'SIGTERM',
    );
    expect(r.exitCode, String(r.stderr)).toBe(5);
    // Far below the 5 minutes of --lock-timeout it would otherwise wait.
    expect(Date.now() - sent).toBeLessThan(20_000);
    expect(String(r.stderr)).toMatch(/interrupted while waiting for the lease of release storefront/);
    const lease = await getJson(['get', 'lease', 'helm-installer-storefront'], {
      kubeconfig: kubeconfig(),
      namespace: ns,
    });
    expect(lease.spec.holderIdentity).toBe('other-installer/7/abcdef');
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1]);
  });

  it('a second SIGTERM forces exit while helm is still busy; the next run recovers the release', async () => {
    const ns = await createNamespace('sigterm-twice', { kubeconfig: kubeconfig() });
    expect((await install('storefront', ns)).exitCode).toBe(0);
    // The real helm behind a wrapper that holds SIGTERM back from `upgrade`: a helm slow to stop.
    const dir = tempDir('slow-helm');
    const wrapper = join(dir, 'helm');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nif [ "$1" = upgrade ]; then\n  trap 'echo "wrapper: SIGTERM held back" >&2' TERM\n  '${helm4}' "$@" &\n  pid=$!\n  while kill -0 $pid 2>/dev/null; do wait $pid; done\n  exit 1\nfi\nexec '${helm4}' "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const termination = join(dir, 'termination-log');
    const run = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere', '--timeout', '5m'], {
      HELM_BIN: wrapper,
      HELM_INSTALLER_TERMINATION_LOG: termination,
    });
    const { child, logged, killGroup } = run;
    await logged('running helm upgrade --install');
    await waitForRelease('storefront', ns, { status: 'pending-upgrade' }, { run, timeoutMs: 60_000 });
    child.kill('SIGTERM');
    await logged('signal received: stopping cleanly (a second signal forces exit)');
    const sent = Date.now();
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode, String(r.stderr)).toBe(5);
    // Far below the 5 minutes helm (holding SIGTERM back) would go on for.
    expect(Date.now() - sent).toBeLessThan(20_000);
    expect(String(r.stderr)).toMatch(/cause: forced exit on a second SIGTERM during upgrade/);
    expect(readFileSync(termination, 'utf8')).toMatch(/^helm-installer FAILED \(exit 5/);
    // The pod is gone: its helm dies with it, leaving the release pending.
    killGroup('SIGKILL');
    expect((await history('storefront', ns)).at(-1)?.status).toBe('pending-upgrade');

    const next = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
    expect(next.exitCode, next.stderr).toBe(0);
    const h = await history('storefront', ns);
    expect(h.at(-1)!.status).toBe('deployed');
    expect(h.map((x) => x.status)).not.toContain('pending-upgrade');
  });
});
