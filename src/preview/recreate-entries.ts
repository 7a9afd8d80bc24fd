// Which objects of a plan install would recreate before helm upgrades (a field that cannot
// change), pure: the comparison install makes (src/drift/immutable-fields.ts) and the dry run the
// plan already asked for each changed object. No request of its own: an object is marked when the
// manifests differ in an immutable field, the API server refused its dry run as immutable, and
// the live object is this release's.
import { immutableCandidates, isImmutableRefusal } from '../drift/immutable-fields.js';
import type { PlacedObject } from '../drift/manifest-objects.js';
import type { Obj, PlanObjectInput } from './plan-types.js';

export function markRecreated(
  objects: readonly PlanObjectInput[],
  manifests: { previous: PlacedObject[]; next: PlacedObject[] },
  o: { release: string; releaseNamespace: string },
): PlanObjectInput[] {
  const candidates = immutableCandidates(manifests.previous, manifests.next);
  if (candidates.length === 0) return [...objects];
  const key = (x: { kind: string; namespace?: string; name: string }) => `${x.kind}/${x.namespace ?? ''}/${x.name}`;
  const byKey = new Map(candidates.map((c) => [key(c), c]));
  return objects.map((input) => {
    const c = byKey.get(key(input));
    if (
      !c ||
      input.hook !== undefined ||
      input.refused === undefined ||
      !isImmutableRefusal(input.refused) ||
      !ownedBy(input.live, o)
    )
      return input;
    return { ...input, recreate: { fields: c.fields, how: c.how } };
  });
}

function ownedBy(live: Obj | undefined, o: { release: string; releaseNamespace: string }): boolean {
  const annotations = ((live?.metadata as Obj | undefined)?.annotations ?? {}) as Obj;
  return (
    annotations['meta.helm.sh/release-name'] === o.release &&
    annotations['meta.helm.sh/release-namespace'] === o.releaseNamespace
  );
}
