// Which object goes where, pure: the vendor's render (base) against the customer's (full).
// - Secrets (of either render) never go to base/ or overlay/: the customer's go to secrets/.
// - helm test hooks are not exported: they run on `helm test`, which no GitOps engine does.
// - Same object in both: a JSON6902 patch when they differ (json-patch.ts says why not a
//   strategic merge: it merges lists by keys only kustomize's built-in kinds have, so a custom
//   resource's list would be replaced or merged differently than helm rendered it; RFC 6902
//   operations mean the same thing for every kind).
// - Only in the customer's render: a new object, in full. Only in the vendor's: deleted with a
//   `$patch: delete` (RFC 6902 cannot delete a whole object).
// - A patch cannot change an object's apiVersion (kustomize targets one version): such an object
//   is written in full in the overlay and left out of the base.
import { diffObjects, type JsonPatchOperation } from './json-patch.js';
import { versionOf, type RenderedObject } from './manifest-documents.js';

interface ObjectPatch {
  object: RenderedObject;
  operations: JsonPatchOperation[];
}

export interface OverlaySplit {
  /** What base/ lists, CRDs first, then in helm's order. */
  base: RenderedObject[];
  patches: ObjectPatch[];
  /** Objects the overlay adds in full: new ones, and those a patch cannot express (`inFull`). */
  added: RenderedObject[];
  /** The vendor's objects the customer's values remove. */
  removed: RenderedObject[];
  /** Objects written in full in the overlay although the vendor's render has them, and why. */
  inFull: { object: RenderedObject; reason: string }[];
  /** The customer's Secrets: secrets/. */
  secrets: RenderedObject[];
  /** helm test hooks of the customer's render: not exported. */
  tests: RenderedObject[];
}

export const isSecret = (o: RenderedObject) => o.apiVersion === 'v1' && o.kind === 'Secret';
export const isTestHook = (o: RenderedObject) =>
  o.hook !== undefined && o.hook.split(',').some((h) => h.trim().startsWith('test'));
const isCrd = (o: RenderedObject) => o.kind === 'CustomResourceDefinition';
const exported = (o: RenderedObject) => !isSecret(o) && !isTestHook(o);

/** CRDs first (their custom resources need them), otherwise the order given. */
function crdsFirst(objects: RenderedObject[]): RenderedObject[] {
  return [...objects.filter(isCrd), ...objects.filter((o) => !isCrd(o))];
}

export function splitOverlay(vendor: RenderedObject[], customer: RenderedObject[]): OverlaySplit {
  const vendorById = new Map(vendor.filter(exported).map((o) => [o.id, o]));
  const customerIds = new Set(customer.map((o) => o.id));
  const plan: OverlaySplit = {
    base: [],
    patches: [],
    added: [],
    removed: [],
    inFull: [],
    secrets: customer.filter((o) => isSecret(o) && !isTestHook(o)),
    tests: customer.filter(isTestHook),
  };
  const notInBase = new Set<string>();
  for (const object of crdsFirst(customer.filter(exported))) {
    const theirs = vendorById.get(object.id);
    if (!theirs) plan.added.push(object);
    else if (versionOf(theirs.apiVersion) !== versionOf(object.apiVersion)) {
      plan.inFull.push({
        object,
        reason: `the customer's values change its apiVersion from ${theirs.apiVersion} to ${object.apiVersion}, which a kustomize patch cannot do`,
      });
      plan.added.push(object);
      notInBase.add(object.id);
    } else {
      const operations = diffObjects(theirs.body, object.body);
      if (operations.length > 0) plan.patches.push({ object: theirs, operations });
    }
  }
  plan.base = crdsFirst([...vendorById.values()].filter((o) => !notInBase.has(o.id)));
  plan.removed = plan.base.filter((o) => !customerIds.has(o.id));
  return plan;
}
