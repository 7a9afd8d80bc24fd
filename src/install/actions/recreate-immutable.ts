// Action "recreate", under the Lease, just before helm upgrades a release that was deployed
// before: the objects whose change the API server would refuse as immutable (found and confirmed
// by src/drift/immutable-changes.ts) are deleted and waited for, so helm creates them again
// instead of failing and rolling back on every run. Nothing is lost: a StatefulSet whose selector
// stays is deleted with its pods orphaned (they and their PVCs stay, the new one adopts them);
// any other object is deleted with what it owns, and a StatefulSet's PVCs, which nothing owns,
// stay and bind to the new pods by name (`<claim>-<sts>-<ordinal>`). Killed halfway, the next run
// finds the deleted objects missing (helm creates them) and deletes the rest.
import { setTimeout as sleep } from 'node:timers/promises';
import { durationMs } from '../../options/config.js';
import type { ResourceIndex } from '../../cluster/capabilities.js';
import type { ReleaseLease } from '../../cluster/release-lease.js';
import { toInstallerApiError } from '../../cluster/kube-errors.js';
import { findImmutableChanges, type ImmutableChange } from '../../drift/immutable-changes.js';
import { describeObject } from '../../drift/manifest-objects.js';
import { objectClient, type ObjectClient, type PropagationPolicy } from '../../cluster/object-client.js';
import { HelmOperationError, TransientError } from '../../common/errors.js';
import type { ClusterRun, InstallRun } from '../run-context.js';

export interface RecreateRequest {
  /** The manifest of the last deployed revision. */
  previousManifest: string;
  /** This run's render. */
  manifests: string;
  resources: ResourceIndex;
  lease: ReleaseLease;
}

const POLL_MS = 250;

/** Deletes what must be recreated and waits until it is gone; returns it (none: nothing asked of the cluster). */
export async function recreateImmutable(run: InstallRun, cluster: ClusterRun, r: RecreateRequest): Promise<ImmutableChange[]> {
  const signal = AbortSignal.any([run.signal, r.lease.lost]);
  const input = { previousManifest: r.previousManifest, manifests: r.manifests, release: run.release, releaseNamespace: cluster.namespace, resources: r.resources, signal };
  run.stage('checking fields that cannot change');
  const changes = await findImmutableChanges(cluster.kube, input);
  if (changes.length === 0) return [];
  if (run.o.recreateImmutable === 'never') throw notRecreated(run.release, changes);
  run.stage('recreating objects whose fields cannot change');
  const client = await objectClient(cluster.kube, signal);
  const deadline = Date.now() + durationMs(run.o.timeout);
  try {
    await Promise.all(changes.map((c) => deleteAndWait(run, cluster, client, c, { deadline, signal })));
  } catch (error) {
    if (r.lease.lost.aborted) throw r.lease.lost.reason;
    if (run.signal.aborted) throw new TransientError('interrupted (SIGTERM/SIGINT) while recreating objects whose fields cannot change', { hint: 'Run the installer again: it finishes the recreate.' });
    throw error;
  }
  return changes;
}

async function deleteAndWait(run: InstallRun, cluster: ClusterRun, client: ObjectClient, c: ImmutableChange, o: { deadline: number; signal: AbortSignal }): Promise<void> {
  run.logger.info({ object: describeObject(c), fields: c.fields, reason: c.reason, how: c.how }, `recreating ${describeObject(c)}: ${c.fields.join(', ')} cannot change; ${consequence(c)}`);
  await client.delete(c.path, propagation(c), c.uid).catch((error: unknown) => {
    throw toInstallerApiError(error, `deleting ${describeObject(c)} to recreate it`, cluster.kube.server);
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
  if (c.how === 'orphan') return `deleted with its pods orphaned: they and their PVCs stay, and the new ${c.kind} adopts them`;
  if (c.kind === 'StatefulSet') return 'deleted with its pods (the new selector would not adopt them); its PVCs stay and bind to the new pods';
  return 'deleted; helm creates it again';
}

/** Polls until the object is gone or is another object (helm, or someone, created it again). */
async function untilGone(client: ObjectClient, c: ImmutableChange, deadline: number, signal: AbortSignal): Promise<void> {
  for (;;) {
    const live = await client.get(c.path);
    if (!live || (live.metadata as { uid?: string } | undefined)?.uid !== c.uid) return;
    if (Date.now() >= deadline) {
      throw new TransientError(`${describeObject(c)} was deleted to be recreated and is still there after --timeout (its finalizers or its pods' termination hold it)`, {
        hint: `See what holds it (kubectl get ${c.kind.toLowerCase()} ${c.name}${c.namespace ? ` -n ${c.namespace}` : ''} -o yaml: metadata.finalizers), then run again; the next run finishes the recreate.`,
      });
    }
    await sleep(POLL_MS, undefined, { signal });
  }
}

/** --recreate-immutable never: the upgrade would fail on these; named with both ways out (one line each: the summary clips long lines). */
export function notRecreated(release: string, changes: ImmutableChange[]): HelmOperationError {
  const lines = changes.flatMap((c) => [`  ${describeObject(c)}: ${c.fields.join(', ')} (${c.reason})`, `    by hand: ${deleteCommand(c)}`]);
  return new HelmOperationError([`upgrade of release ${release} not started: it changes fields the API server refuses to change, and --recreate-immutable is never:`, ...lines].join('\n'), {
    hint: "Run again with --recreate-immutable auto (HELM_INSTALLER_RECREATE_IMMUTABLE=auto): it recreates them and keeps the pods' data (PVCs stay); or delete each as shown (by hand), then run again.",
  });
}

/** The kubectl command that does what the recreate does, for an admin who recreates by hand. */
export function deleteCommand(c: Pick<ImmutableChange, 'kind' | 'name' | 'namespace' | 'how'>): string {
  return `kubectl delete ${c.kind.toLowerCase()} ${c.name}${c.namespace ? ` -n ${c.namespace}` : ''} --cascade=${propagation(c).toLowerCase()}`;
}
