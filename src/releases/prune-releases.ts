// Uninstalls what the plan dropped or switched off: each release of the last run's inventory
// that this run does not install, dependents first, under the release's Lease like any other
// change. Only a release whose newest record carries this app's OWNER_LABEL is ours to remove;
// any other is named and left alone.
import type { KubeClients } from '../cluster/kube-client.js';
import { ReleaseLease } from '../cluster/release-lease.js';
import { ReleaseRecords } from '../cluster/release-secrets.js';
import type { HelmClient } from '../helm/helm-client.js';
import type { InstallOptions } from '../reconcile/install-options.js';
import type { Logger } from 'pino';
import { OWNER_LABEL, type InventoryEntry } from './inventory.js';

export type PruneResult = 'uninstalled' | 'not ours' | 'already gone';

export interface PruneContext {
  kube: KubeClients;
  helm: HelmClient;
  app: string;
  o: Pick<InstallOptions, 'timeout' | 'lockTimeout' | 'connectTimeout'>;
  logger: Logger;
  signal: AbortSignal;
}

/** Whose the release is now: its newest record's OWNER_LABEL (`plan` asks this too). */
export async function ownership(
  kube: KubeClients,
  e: InventoryEntry,
  app: string,
): Promise<{ owner: 'ours' | 'not ours' | 'gone'; label?: string }> {
  const newest = (await new ReleaseRecords(kube, e.namespace, e.name).current()).at(-1);
  if (!newest) return { owner: 'gone' };
  const label = newest.labels[OWNER_LABEL];
  return { owner: label === app ? 'ours' : 'not ours', label };
}

export async function pruneRelease(c: PruneContext, e: InventoryEntry): Promise<PruneResult> {
  const { owner, label } = await ownership(c.kube, e, c.app);
  if (owner === 'gone') return 'already gone';
  if (owner === 'not ours') {
    c.logger.warn(
      { release: e.name, namespace: e.namespace, owner: label ?? null },
      `release ${e.namespace}/${e.name} is no longer in the plan, but it is not this app's (no ${OWNER_LABEL}=${c.app} label): left alone`,
    );
    return 'not ours';
  }
  return underReleaseLease(c, e, async () => {
    c.logger.info(
      { release: e.name, namespace: e.namespace },
      `uninstalling ${e.namespace}/${e.name}: the plan no longer installs it`,
    );
    await c.helm.uninstall({ release: e.name, namespace: e.namespace, timeout: c.o.timeout }, { signal: c.signal });
    return 'uninstalled' as const;
  });
}

/** fn while holding the release's Lease, as every change to a release is made (prune, the app rollback). */
export async function underReleaseLease<T>(
  c: PruneContext,
  e: { namespace: string; name: string },
  fn: () => Promise<T>,
): Promise<T> {
  const lease = await ReleaseLease.acquire(c.kube, {
    namespace: e.namespace,
    release: e.name,
    waitMs: c.o.lockTimeout,
    connectMs: c.o.connectTimeout,
    signal: c.signal,
    logger: c.logger,
    beforeCreatingNamespace: async () => undefined,
  });
  try {
    return await fn();
  } finally {
    await lease.release();
  }
}
