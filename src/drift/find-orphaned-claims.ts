// The claims an upgrade would leave behind, read for install and plan: the StatefulSets of the
// deployed revision's manifest against the new render (orphaned-claims.ts decides), and the live
// PVCs of only the namespaces those StatefulSets are in. A release without a StatefulSet asks
// the cluster nothing.
import type { KubeClients } from '../cluster/kube-client.js';
import { objectClient } from '../cluster/object-client.js';
import type { ImmutableInput } from './immutable-changes.js';
import { manifestObjects, placeObjects } from './manifest-objects.js';
import { type LiveClaim, orphanedClaims, type OrphanedClaims } from './orphaned-claims.js';

/** What the recreate check reads too: the deployed revision's manifest against the new render. */
type ClaimsInput = ImmutableInput;

export async function findOrphanedClaims(kube: KubeClients, i: ClaimsInput): Promise<OrphanedClaims[]> {
  const place = (text: string) =>
    placeObjects(manifestObjects(text), i.resources, { releaseNamespace: i.releaseNamespace, release: i.release });
  const previous = place(i.previousManifest).filter((o) => o.kind === 'StatefulSet');
  if (previous.length === 0) return [];
  const client = await objectClient(kube, i.signal);
  const namespaces = [...new Set(previous.map((o) => o.namespace ?? i.releaseNamespace))];
  const live = (
    await Promise.all(
      namespaces.map(async (ns) =>
        claimsIn(await client.list(`/api/v1/namespaces/${encodeURIComponent(ns)}/persistentvolumeclaims`, {}), ns),
      ),
    )
  ).flat();
  return orphanedClaims(previous, place(i.manifests), live);
}

function claimsIn(list: Record<string, unknown>, namespace: string): LiveClaim[] {
  const items = (list.items ?? []) as { metadata?: { name?: string }; status?: { phase?: string } }[];
  return items.map((c) => ({
    name: String(c.metadata?.name),
    namespace,
    ...(c.status?.phase ? { phase: c.status.phase } : {}),
  }));
}
