// The live objects a plan compares with (and a first install checks the owners of: ownership.ts):
// one list per kind and namespace the release uses (never a read per object, so a 1000-object
// chart costs a few dozen requests), paged so that no answer holds more than PAGE objects. Where
// the RBAC allows get but not list, each object is read instead; where it allows neither, the run
// fails naming the kind and the verb (exit 6), as the drift check does.
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus } from '../cluster/kube-errors.js';
import { driftApiError, mapBounded, type ApiPurpose } from './detect-drift.js';
import type { PlacedObject } from './manifest-objects.js';
import type { Obj, ObjectClient } from '../cluster/object-client.js';

const PAGE = '500';
const CONCURRENCY = 8;

/** The key of an object across API versions of its group: `apps/Deployment/shop/web`. */
export function objectKey(o: { apiVersion: string; kind: string; namespace?: string; name: string }): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.indexOf('/')) : '';
  return `${group}/${o.kind}/${o.namespace ?? ''}/${o.name}`;
}

/** The live objects among `placed`, by objectKey; an object that does not exist is not in the map. */
export async function readLive(
  kube: KubeClients,
  client: ObjectClient,
  placed: readonly PlacedObject[],
  purpose: ApiPurpose = 'plan',
): Promise<Map<string, Obj>> {
  const groups = new Map<string, PlacedObject[]>();
  for (const p of placed) {
    if (!p.path) continue; // a kind the cluster does not serve: nothing of it can exist
    const collection = p.path.slice(0, p.path.lastIndexOf('/'));
    groups.set(collection, [...(groups.get(collection) ?? []), p]);
  }
  const live = new Map<string, Obj>();
  await mapBounded([...groups], CONCURRENCY, async ([collection, members]) => {
    const wanted = new Set(members.map(objectKey));
    for (const object of await readCollection(kube, client, collection, members, purpose)) {
      const metadata = (object.metadata ?? {}) as { name?: string; namespace?: string };
      const key = objectKey({
        apiVersion: String(object.apiVersion),
        kind: String(object.kind),
        name: String(metadata.name ?? ''),
        namespace: metadata.namespace,
      });
      if (wanted.has(key)) live.set(key, object);
    }
  });
  return live;
}

async function readCollection(
  kube: KubeClients,
  client: ObjectClient,
  collection: string,
  members: PlacedObject[],
  purpose: ApiPurpose,
): Promise<Obj[]> {
  const first = members[0]!;
  try {
    return await listAll(client, collection, first);
  } catch (error) {
    const status = apiStatus(error);
    if (status !== 403 && status !== 401) throw driftApiError(kube, error, first, 'get', purpose);
    // No list: one read per object, each refused with the kind and verb named.
    const found = await mapBounded(members, CONCURRENCY, (p) =>
      client.get(p.path!).catch((e: unknown) => {
        throw driftApiError(kube, e, p, 'get', purpose);
      }),
    );
    return found.flatMap((o, i) => (o ? [identify(o, members[i]!)] : []));
  }
}

async function listAll(client: ObjectClient, collection: string, like: PlacedObject): Promise<Obj[]> {
  const out: Obj[] = [];
  let next: string | undefined;
  do {
    const page = await client.list(collection, { limit: PAGE, ...(next ? { continue: next } : {}) });
    for (const item of (page.items as Obj[] | undefined) ?? []) out.push(identify(item, like));
    next = ((page.metadata as Obj | undefined)?.continue as string | undefined) || undefined;
  } while (next);
  return out;
}

/** A List's items carry neither kind nor apiVersion: they are those of the list asked for. */
function identify(item: Obj, like: PlacedObject): Obj {
  return { apiVersion: item.apiVersion ?? like.apiVersion, kind: item.kind ?? like.kind, ...item };
}
