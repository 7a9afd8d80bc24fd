// The Lease given back on exit, against the real API server (issue 40): a run that had ended
// (helm OOM-killed, exit 5) left its Lease behind on a loaded machine. Its delete is conditional
// on the resourceVersion last seen, and a renewal that landed after that (one in flight at exit,
// or one whose answer a client timeout lost) made it fail with a conflict. The test changes the
// Lease under the holder as such a renewal does, then releases: it must be gone, and a Lease
// another installer took in between must stay.
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectKube, type KubeClients } from '../../src/cluster/kube-client.js';
import { leaseName } from '../../src/cluster/lease-decision.js';
import { ReleaseLease } from '../../src/cluster/release-lease.js';
import { createLogger } from '../../src/common/logger.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { kubectl } from '../cluster/kube.js';
import { kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const fresh = namespacesDeletedAfterAll();
const release = 'storefront';
const name = leaseName(release);
let kube: KubeClients;
const logged: { msg: string; level: number }[] = [];
const logger = createLogger({
  format: 'json',
  level: 'debug',
  secrets: new SecretRegistry(),
  destination: new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logged.push(JSON.parse(line));
      done();
    },
  }),
});

beforeAll(async () => {
  const before = process.env.KUBECONFIG;
  process.env.KUBECONFIG = kubeconfig();
  try {
    kube = await connectKube();
  } finally {
    process.env.KUBECONFIG = before;
  }
});

const acquire = (namespace: string) =>
  ReleaseLease.acquire(kube, {
    namespace,
    release,
    waitMs: 5000,
    connectMs: 10_000,
    signal: new AbortController().signal,
    logger,
  });

async function leaseNow(
  namespace: string,
): Promise<{ metadata: { resourceVersion: string }; spec: { holderIdentity?: string } } | undefined> {
  const r = await kubectl(['get', 'lease', name, '-o', 'json'], { kubeconfig: kubeconfig(), namespace, reject: false });
  return r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
}

const patch = (namespace: string, spec: Record<string, string>) =>
  kubectl(['patch', 'lease', name, '--type', 'merge', '-p', JSON.stringify({ spec })], {
    kubeconfig: kubeconfig(),
    namespace,
  });

describe('the Lease is released on exit, whatever happened to it while held', () => {
  it('a renewal landed after the version the holder last saw (still its own): released all the same', async () => {
    const ns = await fresh('lease-release');
    const lease = await acquire(ns);
    const held = await leaseNow(ns);
    expect(held?.spec.holderIdentity).toBe(lease.identity);
    // What a renewal whose answer was lost does: the holder's own Lease, at a newer version.
    await patch(ns, { renewTime: new Date().toISOString().replace(/Z$/, '000Z') });
    const renewed = await leaseNow(ns);
    expect(renewed?.metadata.resourceVersion).not.toBe(held?.metadata.resourceVersion);
    expect(renewed?.spec.holderIdentity).toBe(lease.identity);

    await lease.release();
    expect(await leaseNow(ns)).toBeUndefined();
    expect(logged.filter((l) => /could not release the lease/.test(l.msg))).toEqual([]);
  });

  it('taken by another installer in between: left to it', async () => {
    const ns = await fresh('lease-release-taken');
    const lease = await acquire(ns);
    await patch(ns, { holderIdentity: 'installer-pod-b/9/abcdef' });
    await lease.release();
    expect((await leaseNow(ns))?.spec.holderIdentity).toBe('installer-pod-b/9/abcdef');
  });
});
