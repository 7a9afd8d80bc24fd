// A Lease whose holder ran in a pod, against the real API server: the holder record (annotation
// helm-installer/holder, what an installer in a Job writes from POD_NAME and POD_NAMESPACE) names
// its pod; the next run reads that pod and takes the Lease over at once only when the pod is gone
// or has ended. A pod that still exists and has not ended is no proof: the run waits as before.
// The Lease is renewed by the test throughout, so only the proof can explain a takeover.
import { describe, expect, it } from 'vitest';
import { kubectl } from '../cluster/kube.js';
import { HOLDER_ANNOTATION } from '../../src/cluster/lease-holder.js';
import { LEASE_DURATION_SECONDS, leaseName } from '../../src/cluster/lease-decision.js';
import { history, install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const opts = () => ({ kubeconfig: kubeconfig() });
const lease = leaseName('storefront');
// Their releases hold database claims from the cluster's volume pool: given back when the file ends.
const createNamespace = namespacesDeletedAfterAll();

function logLines(stdout: string): { msg: string; [k: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
}

/**
 * The steps the run logged while getting the Lease, in order (acquired, waiting, taken over). A
 * takeover at once is that one line, with no "waiting for it" before it: the Lease is renewed
 * throughout, so a run that waited would wait to its --lock-timeout. What the run did, not how
 * long it took: a timing asserted here is flaky under load (speed is measured in benchmarks).
 */
function leaseSteps(stdout: string): string[] {
  return logLines(stdout)
    .map((l) => l.msg)
    .filter((m) =>
      /^lease acquired|^another installer holds this release|^lease taken over|taking the Lease over$/.test(m),
    );
}

/** A Lease held by an installer in pod `pod`, renewed every second until the returned stop. */
async function heldFromPod(ns: string, pod: string): Promise<{ holder: string; stop: () => Promise<void> }> {
  const holder = `${pod}/7/abcdef`;
  const now = () => new Date().toISOString().replace(/Z$/, '000Z');
  const body = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: lease,
      namespace: ns,
      annotations: { [HOLDER_ANNOTATION]: JSON.stringify({ pid: 7, group: 1, pod: { namespace: ns, name: pod } }) },
    },
    spec: {
      holderIdentity: holder,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      acquireTime: now(),
      renewTime: now(),
    },
  };
  await kubectl(['apply', '-f', '-'], { ...opts(), input: JSON.stringify(body) });
  let renewing = true;
  const renewer = (async () => {
    while (renewing) {
      await kubectl(
        ['patch', 'lease', lease, '--type', 'merge', '-p', JSON.stringify({ spec: { renewTime: now() } })],
        { ...opts(), namespace: ns, reject: false },
      );
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    holder,
    stop: async () => {
      renewing = false;
      await renewer;
    },
  };
}

/** A pod that exists but is never scheduled (Pending): what an installer pod looks like to the API. */
async function pendingPod(ns: string, name: string): Promise<void> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns },
    spec: {
      restartPolicy: 'Never',
      nodeSelector: { zone: 'nowhere' },
      containers: [{ name: 'installer', image: 'registry.invalid/installer:1' }],
    },
  };
  await kubectl(['apply', '-f', '-'], { ...opts(), input: JSON.stringify(pod) });
}

describe('a Lease held from a pod: taken over at once when that pod is gone or ended, never while it may run', () => {
  it('its pod no longer exists: taken over at once, though renewed a moment ago', async () => {
    const ns = await createNamespace('lease-pod-gone');
    const { holder, stop } = await heldFromPod(ns, 'storefront-installer-dead1');
    try {
      const r = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
      expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
      expect(leaseSteps(r.stdout), r.stdout.slice(0, 3000)).toEqual([
        `holder ${holder} is gone: its pod ${ns}/storefront-installer-dead1 no longer exists; taking the Lease over`,
      ]);
      expect((await history('storefront', ns)).map((h) => h.status)).toEqual(['deployed']);
    } finally {
      await stop();
    }
  });

  it('its pod exists and has not ended (Pending): no proof, the run waits and exits 7 naming the holder', async () => {
    const ns = await createNamespace('lease-pod-pending');
    await pendingPod(ns, 'storefront-installer-live1');
    const { holder, stop } = await heldFromPod(ns, 'storefront-installer-live1');
    try {
      const r = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '3s' });
      expect(r.exitCode, r.stderr).toBe(7);
      expect(r.stderr).toContain(`release storefront is busy: installer ${holder} holds Lease ${ns}/${lease}`);
      expect(
        logLines(r.stdout).some(
          (l) =>
            l.msg === 'another installer holds this release: waiting for it' &&
            l.holderState === `its pod ${ns}/storefront-installer-live1 is Pending`,
        ),
      ).toBe(true);
      expect(await history('storefront', ns)).toEqual([]);
    } finally {
      await stop();
    }

    // The same pod ended (its status as the kubelet reports a failed container): taken over at once.
    await kubectl(
      [
        'patch',
        'pod',
        'storefront-installer-live1',
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { phase: 'Failed' } }),
      ],
      { ...opts(), namespace: ns },
    );
    const again = await heldFromPod(ns, 'storefront-installer-live1');
    try {
      const r = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '60s' });
      expect(r.exitCode, `${r.stdout.slice(-3000)}\n${r.stderr}`).toBe(0);
      expect(leaseSteps(r.stdout), r.stdout.slice(0, 3000)).toEqual([
        `holder ${holder} is gone: its pod ${ns}/storefront-installer-live1 has ended (Failed); taking the Lease over`,
      ]);
    } finally {
      await again.stop();
    }
  });

  it('its pod Running and Ready, its Lease long unrenewed (a holder slowed by its node, issue 40): alive, never taken; waits and exits 7', async () => {
    const ns = await createNamespace('lease-pod-slow');
    const name = 'storefront-installer-slow1';
    await pendingPod(ns, name);
    // Its status as a kubelet reports a running installer (status subresource, as the node would).
    const status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        {
          name: 'installer',
          image: 'registry.invalid/installer:1',
          imageID: '',
          ready: true,
          restartCount: 0,
          state: { running: { startedAt: new Date().toISOString() } },
        },
      ],
    };
    await kubectl(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], {
      ...opts(),
      namespace: ns,
    });
    // Renewed last a minute ago: expired by its own fields, as a starved holder's Lease is.
    const ago = new Date(Date.now() - 60_000).toISOString().replace(/Z$/, '000Z');
    const holder = `${name}/7/abcdef`;
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: lease,
        namespace: ns,
        annotations: { [HOLDER_ANNOTATION]: JSON.stringify({ pid: 7, group: 1, pod: { namespace: ns, name } }) },
      },
      spec: { holderIdentity: holder, leaseDurationSeconds: LEASE_DURATION_SECONDS, acquireTime: ago, renewTime: ago },
    };
    await kubectl(['apply', '-f', '-'], { ...opts(), input: JSON.stringify(body) });
    const r = await install('storefront', ns, [], { HELM_INSTALLER_LOCK_TIMEOUT: '3s' });
    expect(r.exitCode, r.stderr).toBe(7);
    expect(r.stderr).toContain(`release storefront is busy: installer ${holder} holds Lease ${ns}/${lease}`);
    const waiting = logLines(r.stdout).find((l) => l.msg === 'another installer holds this release: waiting for it');
    expect(waiting?.holderState).toBe(
      `it has not renewed its Lease for ${waiting?.renewedSecondsAgo}s, but its pod ${ns}/${name} is Running and Ready`,
    );
    expect(Number(waiting?.renewedSecondsAgo)).toBeGreaterThan(LEASE_DURATION_SECONDS);
    expect(logLines(r.stdout).some((l) => /taking the Lease over|lease taken over/.test(l.msg))).toBe(false);
    expect(
      JSON.parse((await kubectl(['get', 'lease', lease, '-o', 'json'], { ...opts(), namespace: ns })).stdout).spec
        .holderIdentity,
    ).toBe(holder);
    expect(await history('storefront', ns)).toEqual([]);
  });
});
