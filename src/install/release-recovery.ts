// Stage "release state": a release left pending-install|pending-upgrade|pending-rollback by a
// killed helm (SIGKILL, OOM, a node lost) blocks every later upgrade ("another operation is in
// progress"). Once this run holds the release's Lease, no live installer can be in the middle of
// that operation, so, as Flux's helm-controller and k3s do, the pending revision is marked
// failed and then remediated: rolled back to the last deployed revision, or, for a first install
// that never deployed, uninstalled. The plan is pure; recoverRelease carries it out.
import type { HelmClient } from '../helm/helm-client.js';
import { isPending, type HistoryEntry } from '../helm/helm-results.js';
import type { Logger } from '../common/logger.js';
import type { ReleaseRecords } from '../cluster/release-secrets.js';

export type RecoveryPlan =
  | { kind: 'none' }
  | { kind: 'rollback'; pending: HistoryEntry; to: number }
  | { kind: 'uninstall'; pending: HistoryEntry };

/** Pure: what to do about the release's last revision. */
export function planRecovery(history: HistoryEntry[]): RecoveryPlan {
  const last = history.at(-1);
  if (!last || !isPending(last.status)) return { kind: 'none' };
  const earlier = history.slice(0, -1);
  // The revision helm still calls deployed (a pending upgrade or rollback does not supersede it
  // until it succeeds); failing that, the newest one that was deployed once.
  const target = earlier.findLast((h) => h.status === 'deployed') ?? earlier.findLast((h) => h.status === 'superseded');
  return target ? { kind: 'rollback', pending: last, to: target.revision } : { kind: 'uninstall', pending: last };
}

export interface RecoveryContext {
  release: string;
  namespace: string;
  records: ReleaseRecords;
  helm: HelmClient;
  logger: Logger;
  timeout: string;
  historyMax: number;
  signal: AbortSignal;
  /** Who holds the Lease (this run), for the record and the log. */
  holder: string;
}

/** Carries out the plan; returns whether the release still exists afterwards. */
export async function recoverRelease(plan: RecoveryPlan, c: RecoveryContext): Promise<{ released: boolean }> {
  if (plan.kind === 'none') return { released: false };
  const { pending } = plan;
  const description = `Marked failed by helm-installer: left ${pending.status} by an operation that no longer runs (no installer held the release lease)`;
  await c.records.markFailed(pending.revision, pending.status, description);
  c.logger.warn(
    {
      release: c.release,
      revision: pending.revision,
      was: pending.status,
      since: pending.updated,
      lease: c.holder,
      next: plan.kind === 'rollback' ? `rollback to revision ${plan.to}` : 'uninstall (never deployed)',
    },
    `release was stuck ${pending.status}: marked revision ${pending.revision} failed. Safe because this run holds the release lease, so no other installer is running that operation (a killed helm left it)`,
  );
  if (plan.kind === 'rollback') {
    await c.helm.rollback({ release: c.release, namespace: c.namespace, revision: plan.to, timeout: c.timeout, historyMax: c.historyMax }, { signal: c.signal });
    c.logger.info({ release: c.release, revision: plan.to }, `rolled back to revision ${plan.to}, the last deployed one; continuing`);
    return { released: false };
  }
  await c.helm.uninstall({ release: c.release, namespace: c.namespace, timeout: c.timeout }, { signal: c.signal });
  c.logger.info({ release: c.release }, 'uninstalled the first install that never deployed; installing again');
  return { released: true };
}
