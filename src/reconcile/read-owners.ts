// The live objects whose owners the "owners" step judges (actions/check-owners.ts): the new
// chart's objects as helm applies them (their namespace placed), without its hooks and its crds/
// (helm's --take-ownership adopts neither), read with one list per kind and namespace.
import type { ResourceIndex } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { objectClient } from '../cluster/object-client.js';
import { inCrdsFolder, piecesWithSource } from '../crds/chart-crds.js';
import { manifestObjects, placeObjects } from '../drift/manifest-objects.js';
import type { LiveObject } from '../drift/ownership.js';
import { objectKey, readLive } from '../drift/read-live.js';

export async function readOwnedObjects(
  kube: KubeClients,
  r: { manifests: string; resources: ResourceIndex; release: string; releaseNamespace: string; signal: AbortSignal },
): Promise<LiveObject[]> {
  const templates = piecesWithSource(r.manifests)
    .filter(({ source }) => !inCrdsFolder(source))
    .map(({ piece }) => (piece.text.startsWith('---') ? piece.text : `---\n${piece.text}`))
    .join('\n');
  const placed = placeObjects(manifestObjects(templates), r.resources, {
    release: r.release,
    releaseNamespace: r.releaseNamespace,
  }).filter((p) => {
    const annotations = ((p.body.metadata as Record<string, unknown> | undefined)?.annotations ?? {}) as Record<
      string,
      unknown
    >;
    return annotations['helm.sh/hook'] === undefined;
  });
  const live = await readLive(kube, await objectClient(kube, r.signal), placed, 'ownership check');
  return placed.flatMap((p) => {
    const found = live.get(objectKey(p));
    return found
      ? [{ kind: p.kind, name: p.name, ...(p.namespace ? { namespace: p.namespace } : {}), live: found }]
      : [];
  });
}
