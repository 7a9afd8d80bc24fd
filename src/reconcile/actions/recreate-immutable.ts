// Action "recreate", under the Lease, just before helm upgrades a release that was deployed
// before: the objects whose change the API server would refuse as immutable (found and confirmed
// by src/drift/immutable-changes.ts) are deleted and waited for, so helm creates them again
// instead of failing and rolling back on every run. Nothing is lost: a StatefulSet whose selector
// stays is deleted with its pods orphaned (they and their PVCs stay, the new one adopts them);
// any other object is deleted with what it owns, and a StatefulSet's PVCs, which nothing owns,
// stay and bind to the new pods by name (`<claim>-<sts>-<ordinal>`). Killed halfway, the next run
// finds the deleted objects missing (helm creates them) and deletes the rest.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ImmutableChange } from '../../drift/immutable-changes.js';
import { describeObject } from '../../drift/manifest-objects.js';
import type { ObjectClient, PropagationPolicy } from '../../cluster/object-client.js';
import { HelmOperationError, TransientError } from '../../common/errors.js';
import { stopSignal, type ActionRun, type Narration, type Stoppable } from './action.js';

export interface RecreatePort extends Narration, Stoppable {
  recreateImmutable: 'auto' | 'never';
  /**
   * The objects whose change the API server refuses, between this revision's manifest and this
   * run's render (drift/immutable-changes.ts: compared, then each confirmed by a dry run).
   */
  immutableChanges(previous: number, signal: AbortSignal): Promise<ImmutableChange[]>;
  objects(signal: AbortSignal): Promise<Pick<ObjectClient, 'get' | 'delete'>>;
  /** What --timeout leaves from now, in ms: how long a deleted object may take to go. */
  timeoutMs: number;
  /** Describes a failed delete as the API errors elsewhere are. */
  apiError(error: unknown, doing: string): unknown;
}

const POLL_MS = 250;

/** Deletes what must be recreated and waits until it is gone; returns it (none: nothing asked of the cluster). */
export const recreateImmutable: ActionRun<'recreate', RecreatePort> = async (p, step) => {
  const signal = stopSignal(p);
  p.stage('checking fields that cannot change');
  const changes = await p.immutableChanges(step.previous, signal);
  if (changes.length === 0) return { recreated: [] };
  if (p.recreateImmutable === 'never') throw notRecreated(p.release, changes);
  p.stage('recreating objects whose fields cannot change');
  const client = await p.objects(signal);
  const deadline = Date.now() + p.timeoutMs;
  try {
    await Promise.all(changes.map((c) => deleteAndWait(p, client, c, { deadline, signal })));
  } catch (error) {
    if (p.leaseLost.aborted) throw p.leaseLost.reason;
    if (p.signal.aborted)
      throw new TransientError('interrupted (SIGTERM/SIGINT) while recreating objects whose fields cannot change', {
        hint: 'Run the installer again: it finishes the recreate.',
      });
    throw error;
  }
  return { recreated: changes };
};

type Client = Pick<ObjectClient, 'get' | 'delete'>;

async function deleteAndWait(
  p: RecreatePort,
  client: Client,
  c: ImmutableChange,
  o: { deadline: number; signal: AbortSignal },
): Promise<void> {
  p.logger.info(
    { object: describeObject(c), fields: c.fields, reason: c.reason, how: c.how },
    `recreating ${describeObject(c)}: ${c.fields.join(', ')} cannot change; ${consequence(c)}`,
  );
  await client.delete(c.path, propagation(c), c.uid).catch((error: unknown) => {
    throw p.apiError(error, `deleting ${describeObject(c)} to recreate it`);
  });
  await untilGone(client, c, o.deadline, o.signal);
}

/**
 * Orphan: the object alone. A StatefulSet otherwise goes in the foreground, so its pods are gone
 * before the new one creates pods of the same names; anything else in the background.
 */
export function propagation(c: Pick<ImmutableChange, 'kind' | 'how'>): PropagationPolicy {
  if (c.how === 'orphan') return 'Orphan';
  return c.kind === 'StatefulSet' ? 'Foreground' : 'Background';
}

function consequence(c: ImmutableChange): string {
  if (c.how === 'orphan')
    return `deleted with its pods orphaned: they and their PVCs stay, and the new ${c.kind} adopts them`;
  if (c.kind === 'StatefulSet')
    return 'deleted with its pods (the new selector would not adopt them); its PVCs stay and bind to the new pods';
  return 'deleted; helm creates it again';
}

/** Polls until the object is gone or is another object (helm, or someone, created it again). */
async function untilGone(client: Client, c: ImmutableChange, deadline: number, signal: AbortSignal): Promise<void> {
  for (;;) {
    const live = await client.get(c.path);
    if (!live || (live.metadata as { uid?: string } | undefined)?.uid !== c.uid) return;
    if (Date.now() >= deadline) {
      throw new TransientError(
        `${describeObject(c)} was deleted to be recreated and is still there after --timeout (its finalizers or its pods' termination hold it)`,
        {
          hint: `See what holds it (kubectl get ${c.kind.toLowerCase()} ${c.name}${c.namespace ? ` -n ${c.namespace}` : ''} -o yaml: metadata.finalizers), then run again; the next run finishes the recreate.`,
        },
      );
    }
    await sleep(POLL_MS, undefined, { signal });
  }
}

/** --recreate-immutable never: the upgrade would fail on these; named with both ways out (one line each: the summary clips long lines). */
function notRecreated(release: string, changes: ImmutableChange[]): HelmOperationError {
  const lines = changes.flatMap((c) => [
    `  ${describeObject(c)}: ${c.fields.join(', ')} (${c.reason})`,
    `    by hand: ${deleteCommand(c)}`,
  ]);
  return new HelmOperationError(
    [
      `upgrade of release ${release} not started: it changes fields the API server refuses to change, and --recreate-immutable is never:`,
      ...lines,
    ].join('\n'),
    {
      hint: "Run again with --recreate-immutable auto (HELM_INSTALLER_RECREATE_IMMUTABLE=auto): it recreates them and keeps the pods' data (PVCs stay); or delete each as shown (by hand), then run again.",
    },
  );
}

/** The kubectl command that does what the recreate does, for an admin who recreates by hand. */
export function deleteCommand(c: Pick<ImmutableChange, 'kind' | 'name' | 'namespace' | 'how'>): string {
  return `kubectl delete ${c.kind.toLowerCase()} ${c.name}${c.namespace ? ` -n ${c.namespace}` : ''} --cascade=${propagation(c).toLowerCase()}`;
}
