// One installer at a time, and recovery from a killed one, against the real control plane: the
// installer and its helm are SIGKILLed mid-operation (a pod OOM-killed or its node lost), then a
// new run must take over the dead run's Lease at once (its process and process group are provably
// gone), find the release pending, mark it failed, remediate and finish, with no manual step. A
// live holder's Lease is never taken, not even once it stopped renewing (stalled).
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { createNamespace, deleteNamespace, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { helm3 } from '../helpers.js';
import { LEASE_DURATION_SECONDS } from '../../src/cluster/lease-decision.js';
import {
  helmCalls,
  history,
  install,
  killMidRun,
  kubeconfig,
  namespacesDeletedAfterAll,
  spawnStorefront,
  waitForRelease,
  webUnschedulable,
  type RunningCli,
} from './cluster-helpers.js';

const opts = () => ({ kubeconfig: kubeconfig() });
const leaseName = 'helm-installer-storefront';
/** What a run logs when it waits for a holder: a takeover at once never logs it. */
const WAITING = 'another installer holds this release: waiting for it';
// The cases added with the Lease takeover give their database claims back when the file ends.
const fresh = namespacesDeletedAfterAll();

/** A storefront run to kill; no fail-fast, and helm's own timeout far beyond any case's kill point. */
const startInstaller = (ns: string, args: string[], env: Record<string, string> = {}) =>
  spawnStorefront(ns, ['--timeout', '5m', ...args], env);

async function lease(
  ns: string,
): Promise<{ spec: { holderIdentity?: string; leaseDurationSeconds?: number } } | undefined> {
  const r = await kubectl(['get', 'lease', leaseName, '-o', 'json'], { ...opts(), namespace: ns, reject: false });
  return r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
}

/**
 * The Lease as `child` holds it: its own identity (this host's name and its pid), read while it
 * still runs. Any holder would not do: a Lease left by an earlier run, or taken before this one
 * got it, is not the state a case needs (issue 40: a stalled case stopped a run that had not
 * taken the Lease yet, and the next run took over a Lease left behind).
 */
async function heldBy(ns: string, run: RunningCli): Promise<string> {
  const own = new RegExp(`^${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${run.child.pid}/[0-9a-f]{6}$`);
  return run.waitFor(
    `installer ${run.child.pid} to hold the Lease`,
    async () => {
      const holder = (await lease(ns))?.spec.holderIdentity;
      return holder && own.test(holder) ? holder : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200 },
  );
}

/** A process's state letter from /proc (T: stopped), or undefined once it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** Waits until helm has applied the change and is waiting for it, then kills the whole run. */
async function killWhileWaiting(ns: string, run: RunningCli, pending: string): Promise<void> {
  await killMidRun(run, waitForRelease('storefront', ns, { status: pending }, { run, also: webUnschedulable(ns) }));
}

/** The pids whose parent is `pid` (from /proc). */
function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function logLines(stdout: string): { msg: string; [k: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/** The helm runs that read or change the release (a debug log's "running helm"); a render is neither. */
function releaseHelm(stdout: string): string[][] {
  return helmCalls(stdout)
    .map((c) => c.argv)
    .filter((argv) => ['upgrade', 'install', 'rollback', 'uninstall', 'status', 'history', 'get'].includes(argv[0]!));
}

/** A live holder's Lease, renewed every second by the test until the returned stop deletes it. */
async function liveHolder(ns: string, holderIdentity: string): Promise<() => Promise<void>> {
  const now = () => new Date().toISOString().replace(/Z$/, '000Z');
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: leaseName, namespace: ns },
    spec: { holderIdentity, leaseDurationSeconds: LEASE_DURATION_SECONDS, acquireTime: now(), renewTime: now() },
  };
  await kubectl(['apply', '-f', '-'], { ...opts(), input: JSON.stringify(body) });
  let renewing = true;
  const renewer = (async () => {
    while (renewing) {
      await kubectl(
        ['patch', 'lease', leaseName, '--type', 'merge', '-p', JSON.stringify({ spec: { renewTime: now() } })],
        { ...opts(), namespace: ns, reject: false },
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return async () => {
    renewing = false;
    await renewer;
    await kubectl(['delete', 'lease', leaseName, '--ignore-not-found'], { ...opts(), namespace: ns });
  };
}

describe('one installer at a time (Lease) and recovery of a killed one', () => {
  it('a second run waits up to --lock-timeout, then exits 7 naming the live holder; it never touches the release', async () => {
    const ns = await createNamespace('lease-busy', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const first = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere', '--timeout', '60s']);
    // Exactly the first run's identity: its pod (here host) name and pid.
    const holder = await heldBy(ns, first);

    const started = Date.now();
    const second = await install('storefront', ns, ['--set', 'web.replicaCount=3', '--log-level', 'debug'], {
      HELM_INSTALLER_LOCK_TIMEOUT: '3s',
    });
    const waited = Date.now() - started;
    expect(second.exitCode, second.stderr).toBe(7);
    expect(second.stderr).toContain(`release storefront is busy: installer ${holder} holds Lease ${ns}/${leaseName}`);
    expect(second.stderr).toMatch(/next: .*--lock-timeout \(HELM_INSTALLER_LOCK_TIMEOUT\)/);
    // Judged alive by its process (same host): never a takeover.
    expect(
      logLines(second.stdout).some(
        (l) =>
          l.msg === 'another installer holds this release: waiting for it' &&
          l.holder === holder &&
          l.holderState === `pid ${first.child.pid} still runs on this host`,
      ),
    ).toBe(true);
    expect(releaseHelm(second.stdout)).toEqual([]);
    expect(waited).toBeGreaterThanOrEqual(3000);
    // The first run's Lease is intact and the second added no revision.
    expect((await lease(ns))?.spec.holderIdentity).toBe(holder);
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1, 2]);

    first.killGroup('SIGTERM');
    await first.child;
  });

  it('a run that reads the release deployed while another holds the Lease starts no helm on the release: it waits, then exits 7 on the Lease, never on helm\'s "another operation is in progress"', async () => {
    // The flake this pins: a run that started `helm upgrade` beside taking the Lease (held at its
    // post-renderer until the Lease was ours) got, when the holder's revision turned pending
    // between this run's release read and its helm's, helm's own "another operation (install/
    // upgrade/rollback) is in progress": exit 7 at once, without waiting. Here the release reads
    // deployed for the whole wait (a live holder, renewed by the test, that has not written its
    // revision yet): no helm that reads the release may run before the Lease is held.
    const ns = await fresh('lease-no-helm');
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const stopRenewing = await liveHolder(ns, 'installer-pod-a/1/abcdef');
    try {
      const second = await install('storefront', ns, ['--set', 'web.replicaCount=3', '--log-level', 'debug'], {
        HELM_INSTALLER_LOCK_TIMEOUT: '4s',
      });
      expect(second.exitCode, second.stderr).toBe(7);
      expect(second.stderr).toContain(
        `release storefront is busy: installer installer-pod-a/1/abcdef holds Lease ${ns}/${leaseName}`,
      );
      expect(second.stderr).not.toMatch(/another install, upgrade or rollback is in progress/);
      // An older installer's Lease (no record of where it runs): nothing proves it gone.
      expect(
        logLines(second.stdout).some(
          (l) =>
            l.msg === 'another installer holds this release: waiting for it' &&
            /older installer/.test(String(l.holderState)),
        ),
      ).toBe(true);
      expect(releaseHelm(second.stdout)).toEqual([]);
      expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    } finally {
      await stopRenewing();
    }
  });

  it('a live installer that stopped renewing (stalled: SIGSTOP) keeps its Lease past its duration: never taken from it', async () => {
    const ns = await fresh('lease-stalled');
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const first = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere', '--timeout', '90s']);
    const holder = await heldBy(ns, first);
    first.killGroup('SIGSTOP');
    try {
      // The state the case needs, proved before it acts: the first run stopped, not ended, and
      // still the Lease's holder.
      await waitFor('the first installer stopped', () => processState(first.child.pid!) === 'T', {
        timeoutMs: 10_000,
        intervalMs: 50,
      });
      expect((await lease(ns))?.spec.holderIdentity).toBe(holder);
      const started = Date.now();
      const lockTimeout = LEASE_DURATION_SECONDS + 6;
      const second = await install('storefront', ns, ['--set', 'web.replicaCount=3'], {
        HELM_INSTALLER_LOCK_TIMEOUT: `${lockTimeout}s`,
      });
      const waited = Date.now() - started;
      expect(second.exitCode, second.stderr).toBe(7);
      expect(second.stderr).toContain(`release storefront is busy: installer ${holder} holds Lease ${ns}/${leaseName}`);
      expect(waited).toBeGreaterThanOrEqual(lockTimeout * 1000);
      const waiting = logLines(second.stdout).filter(
        (l) => l.msg === 'another installer holds this release: waiting for it',
      );
      expect(waiting.length).toBeGreaterThan(0);
      expect(logLines(second.stdout).some((l) => /taking the Lease over|lease taken over/.test(l.msg))).toBe(false);
      expect((await lease(ns))?.spec.holderIdentity).toBe(holder);
      // The second run's last judgement, in its error: the Lease had gone unrenewed past its duration.
      expect(Number(/renewed (\d+)s ago/.exec(second.stderr)?.[1])).toBeGreaterThan(LEASE_DURATION_SECONDS);
      console.log(
        `stalled holder: the second run waited ${(waited / 1000).toFixed(1)} s and exited 7; the Lease stayed with ${holder}`,
      );
    } finally {
      first.killGroup('SIGCONT');
      first.killGroup('SIGTERM');
      await first.child;
    }
  });

  it('a run waits while another holds the release and proceeds once it is released', async () => {
    const ns = await createNamespace('lease-wait', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    // A live holder: the test renews its Lease every second, then deletes it (released) after 5 s.
    // MicroTime: RFC 3339 with six fractional digits.
    const now = () => new Date().toISOString().replace(/Z$/, '000Z');
    const body = () =>
      JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: leaseName, namespace: ns },
        spec: {
          holderIdentity: 'installer-pod-a/1/abcdef',
          leaseDurationSeconds: 15,
          acquireTime: now(),
          renewTime: now(),
        },
      });
    await kubectl(['apply', '-f', '-'], { ...opts(), input: body() });
    let renewing = true;
    const renewer = (async () => {
      const until = Date.now() + 5000;
      while (renewing && Date.now() < until) {
        await kubectl(
          ['patch', 'lease', leaseName, '--type', 'merge', '-p', JSON.stringify({ spec: { renewTime: now() } })],
          { ...opts(), namespace: ns },
        );
        await new Promise((r) => setTimeout(r, 1000));
      }
      await kubectl(['delete', 'lease', leaseName], { ...opts(), namespace: ns });
    })();
    const started = Date.now();
    const r = await install('storefront', ns, ['--set', 'web.replicaCount=3'], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
    renewing = false;
    await renewer;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    expect(
      logLines(r.stdout).some(
        (l) =>
          l.msg === 'another installer holds this release: waiting for it' && l.holder === 'installer-pod-a/1/abcdef',
      ),
    ).toBe(true);
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    // Released on exit.
    expect(await lease(ns)).toBeUndefined();
  });

  it("SIGKILL mid-upgrade: the next run takes the dead run's Lease over at once, marks the pending revision failed, rolls back, upgrades: deployed, no manual step", async () => {
    const ns = await createNamespace('kill-upgrade', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const killed = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere']);
    const deadHolder = await heldBy(ns, killed);
    await killWhileWaiting(ns, killed, 'pending-upgrade');
    expect((await history('storefront', ns)).map((h) => h.status)).toEqual(['deployed', 'pending-upgrade']);

    const started = Date.now();
    const r = await install('storefront', ns, ['--set', 'web.replicaCount=3'], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
    expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
    const logs = logLines(r.stdout);
    // Taken over at once: the dead run's pid and its process group (helm) are gone, so its Lease,
    // renewed moments before the kill, is not waited for.
    const takeover = logs.find(
      (l) =>
        l.msg ===
        `holder ${deadHolder} is gone: pid ${deadHolder.split('/')[1]} no longer exists on this host, nor anything of its process group (helm); taking the Lease over`,
    );
    expect(takeover, r.stdout.slice(0, 3000)).toBeDefined();
    expect(takeover!.previousHolder).toBe(deadHolder);
    // At its first look, by proof: it never waited (its own record, not a time that load stretches).
    expect(logs.filter((l) => l.msg === WAITING)).toEqual([]);
    const tookMs = Number(takeover!.time) - started;
    console.log(
      `SIGKILL mid-upgrade: the next run took the Lease over ${(tookMs / 1000).toFixed(2)} s after it started (the Lease had been renewed ${takeover!.renewedSecondsAgo} s before); the whole run took ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(
      logs.some((l) =>
        String(l.msg).startsWith(
          'release was stuck pending-upgrade: marked revision 2 failed. Safe because this run holds the release lease',
        ),
      ),
    ).toBe(true);
    expect(logs.some((l) => l.msg === 'rolled back to revision 1, the last deployed one; continuing')).toBe(true);

    const h = await history('storefront', ns);
    expect(h.map((x) => [x.revision, x.status])).toEqual([
      [1, 'superseded'],
      [2, 'failed'],
      [3, 'superseded'],
      [4, 'deployed'],
    ]);
    expect(h[1]!.description).toMatch(/^Marked failed by helm-installer/);
    expect(h[2]!.description).toBe('Rollback to 1');
    const web = await getJson(['get', 'deployment', 'storefront-web'], { ...opts(), namespace: ns });
    expect(web.spec.replicas).toBe(3);
    expect(web.spec.template.spec.nodeSelector?.zone).toBeUndefined();
    expect(await lease(ns)).toBeUndefined();
  });

  it('SIGKILL at random points of an upgrade, 5 times: each next run takes a left Lease over at once and ends deployed', async () => {
    const ns = await createNamespace('kill-random', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const report: string[] = [];
    for (let i = 0; i < 5; i++) {
      const killed = startInstaller(ns, [
        '--set',
        'web.nodeSelector.zone=nowhere',
        '--set',
        `web.replicaCount=${3 + i}`,
      ]);
      // From its start to helm waiting for pods that cannot be scheduled: start, render, Lease, apply, wait.
      const delay = Math.round(300 + Math.random() * 5700);
      const at = Date.now() + delay;
      // A random point is the case, so a time, not a state: then the Lease as the kill leaves it.
      const { seen } = await killMidRun(
        killed,
        killed.waitFor(
          `${delay} ms into the run`,
          async () => Date.now() >= at && { left: (await lease(ns))?.spec.holderIdentity },
          { timeoutMs: delay + 60_000, intervalMs: 50 },
        ),
      );
      const { left } = seen;
      const status = (await history('storefront', ns)).at(-1)?.status;
      const started = Date.now();
      const r = await install('storefront', ns, ['--force-upgrade'], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
      expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
      const takeover = logLines(r.stdout).find((l) => / is gone: .*; taking the Lease over$/.test(l.msg));
      expect(
        logLines(r.stdout).some(
          (l) => l.msg === 'lease taken over: its holder stopped renewing it (the installer died)',
        ),
      ).toBe(false);
      if (left) {
        expect(takeover?.previousHolder, r.stdout.slice(0, 3000)).toBe(left);
        expect(logLines(r.stdout).filter((l) => l.msg === WAITING)).toEqual([]);
      }
      expect((await history('storefront', ns)).at(-1)?.status).toBe('deployed');
      report.push(
        `killed after ${(delay / 1000).toFixed(1)} s (release ${status}, Lease ${left ? 'held' : 'not yet taken'}): next run ${takeover ? `took the Lease over after ${((Number(takeover.time) - started) / 1000).toFixed(2)} s, ` : ''}done in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    }
    console.log(report.join('\n'));
    await deleteNamespace(ns, opts());
  }, 600_000);

  it('only helm killed (what the OOM killer does at the pod memory limit): exit 5, which the Job retries, naming the kill; the next run recovers and upgrades', async () => {
    const ns = await createNamespace('kill-helm', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    const run = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere']);
    await waitForRelease('storefront', ns, { status: 'pending-upgrade' }, { run, also: webUnschedulable(ns) });
    const helmPids = childPids(run.child.pid!).filter((pid) => /^helm/.test(readFileSync(`/proc/${pid}/comm`, 'utf8')));
    expect(helmPids).toHaveLength(1);
    process.kill(helmPids[0]!, 'SIGKILL');
    const r = await run.child;
    expect(r.exitCode, String(r.stderr)).toBe(5);
    expect(String(r.stderr)).toMatch(
      /^cause: install\/upgrade of release storefront stopped: helm was killed by SIGKILL \(in a pod, usually the out-of-memory killer at the container memory limit\)$/m,
    );
    expect(String(r.stderr)).toMatch(/^next: Run the installer again \(the Job retries it\)/m);
    // The installer itself lived on and released its Lease, so the retry needs no wait.
    expect(await lease(ns)).toBeUndefined();
    expect((await history('storefront', ns)).at(-1)?.status).toBe('pending-upgrade');

    const again = await install('storefront', ns, ['--set', 'web.replicaCount=2']);
    expect(again.exitCode, `${again.stdout.slice(-3000)}\n${again.stderr}`).toBe(0);
    expect((await history('storefront', ns)).at(-1)?.status).toBe('deployed');
    // Its database claim goes back to the shared volume pool.
    await deleteNamespace(ns, opts());
  });

  it('SIGKILL mid first install: the next run uninstalls the install that never deployed and installs again', async () => {
    const ns = await createNamespace('kill-install', opts());
    const killed = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere']);
    await killWhileWaiting(ns, killed, 'pending-install');

    const r = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
    expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
    const logs = logLines(r.stdout);
    expect(
      logs.some((l) => String(l.msg).startsWith('release was stuck pending-install: marked revision 1 failed')),
    ).toBe(true);
    expect(logs.some((l) => l.msg === 'uninstalled the first install that never deployed; installing again')).toBe(
      true,
    );
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
    const web = await getJson(['get', 'deployment', 'storefront-web'], { ...opts(), namespace: ns });
    expect(web.spec.template.spec.nodeSelector?.zone).toBeUndefined();
  });

  it('helm 3 records too: SIGKILL mid-upgrade under helm 3.17; after the rollback the release equals what is asked, so no further upgrade', async () => {
    const ns = await createNamespace('kill-helm3', opts());
    const env = { HELM_BIN: helm3 };
    expect((await install('storefront', ns, [], env)).exitCode).toBe(0);
    const killed = startInstaller(ns, ['--set', 'web.nodeSelector.zone=nowhere'], env);
    await killWhileWaiting(ns, killed, 'pending-upgrade');
    const r = await install('storefront', ns, [], { ...env, HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
    expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
    const h = await history('storefront', ns, helm3);
    expect(h.map((x) => x.status)).toEqual(['superseded', 'failed', 'deployed']);
    expect(h[1]!.description).toMatch(/^Marked failed by helm-installer/);
    expect(h[2]!.description).toBe('Rollback to 1');
    expect(r.stderr).toMatch(/unchanged release storefront/);
  });
});
