// Action "recover": a release left pending-install|pending-upgrade|pending-rollback by a killed
// helm (SIGKILL, OOM, a node lost) blocks every later upgrade ("another operation is in
// progress"). Once this run holds the release's Lease, no live installer can be in the middle of
// that operation, so, as Flux's helm-controller and k3s do, the pending revision is marked failed
// in its release Secret and then remediated (remediate.ts): rolled back to the last deployed
// revision or, for a first install that never deployed, uninstalled. The loop then reads the
// release again and decides again (the rollback may have brought back what this run asks for).
import { isPending, type HistoryEntry } from '../../helm/helm-results.js';
import type { Remedy } from '../decide.js';
import type { ActionRun } from './action.js';
import { remediate, type RemediatePort } from './remediate.js';

export interface RecoverPort extends RemediatePort {
  /** Helm's own history: the superseded revisions the records leave out name the target. */
  history(): Promise<HistoryEntry[]>;
  /** Sets the revision's status in its release Secret (the record and its `status` label). */
  markFailed(revision: number, was: string, description: string): Promise<void>;
  /** Who holds the Lease (this run), for the log. */
  holder: string;
  /** The Recovered outcome (an Event, the summary's line). */
  tellRecovered(note: string): void;
}

export const recoverRelease: ActionRun<'recover', RecoverPort> = async (p, step) => {
  const found = planRecovery(await p.history());
  if (!found) return {};
  const { pending, remedy } = found;
  p.stage(`recovering the release (${step.pendingStatus})`);
  await p.markFailed(
    pending.revision,
    pending.status,
    `Marked failed by helm-installer: left ${pending.status} by an operation that no longer runs (no installer held the release lease)`,
  );
  p.logger.warn(
    {
      release: p.release,
      revision: pending.revision,
      was: pending.status,
      since: pending.updated,
      lease: p.holder,
      next: remedy.how === 'rollback' ? `rollback to revision ${remedy.to}` : 'uninstall (never deployed)',
    },
    `release was stuck ${pending.status}: marked revision ${pending.revision} failed. Safe because this run holds the release lease, so no other installer is running that operation (a killed helm left it)`,
  );
  const how = await remediate(p, remedy, 'stuck');
  if (!p.stopped()) p.tellRecovered(`release left ${step.pendingStatus} by a killed operation: ${how}`);
  return {};
};

/** Pure: the pending revision and how to undo it; none when the last revision is not pending. */
export function planRecovery(history: HistoryEntry[]): { pending: HistoryEntry; remedy: Remedy } | undefined {
  const last = history.at(-1);
  if (!last || !isPending(last.status)) return undefined;
  const earlier = history.slice(0, -1);
  // The revision helm still calls deployed (a pending upgrade or rollback does not supersede it
  // until it succeeds); failing that, the newest one that was deployed once.
  const target = earlier.findLast((h) => h.status === 'deployed') ?? earlier.findLast((h) => h.status === 'superseded');
  return { pending: last, remedy: target ? { how: 'rollback', to: target.revision } : { how: 'uninstall' } };
}
