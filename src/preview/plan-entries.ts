// From what the cluster side found (each object's desired and live state) to the plan's entries:
// what each object's install would do, the fields it would change, who changed them by hand, and
// the diff a person reads. Pure: no cluster, no I/O.
import { fieldManagers } from '../drift/managed-fields.js';
import { formatPointer } from '../drift/json-pointer.js';
import { changedLeaves } from './changed-leaves.js';
import { cleanObject, projectOnto, withoutOthersMetadata } from './clean-object.js';
import { maskPair } from './mask.js';
import type { Obj, PlanAction, PlanEntry, PlanObjectInput } from './plan-types.js';
import { unifiedDiff } from './unified-diff.js';

// Managers that are the release itself: helm's server-side apply ('helm' for helm 3 and 4), and
// the API server's name for fields that predate managedFields.
const OWN_MANAGERS = new Set(['helm', 'before-first-apply']);

export interface PlanOptions {
  /** Show secret values in the diffs (--show-secrets); masked otherwise (src/preview/mask.ts). */
  showSecrets: boolean;
}

/**
 * One entry per object, in input order; hooks apart (helm deletes and re-creates them on every
 * install, so they are shown as created, never compared with a live copy). An object neither
 * desired nor live is dropped (nothing to delete), as is a hook with no desired object (the new
 * chart has no such hook: helm runs nothing).
 */
export function planEntries(
  inputs: readonly PlanObjectInput[],
  o: PlanOptions,
): { entries: PlanEntry[]; hooks: PlanEntry[] } {
  const entries: PlanEntry[] = [];
  const hooks: PlanEntry[] = [];
  for (const input of inputs) {
    if (input.hook !== undefined) {
      if (input.desired) hooks.push(oneSided(input, 'create', undefined, cleanObject(input.desired), o));
    } else if (input.desired && input.live) {
      entries.push(compared(input, input.desired, input.live, o));
    } else if (input.desired) {
      entries.push(oneSided(input, 'create', undefined, cleanObject(input.desired), o));
    } else if (input.live) {
      entries.push(oneSided(input, 'delete', cleanObject(input.live), undefined, o));
    }
  }
  return { entries, hooks };
}

/** A create, a delete or a hook: the whole object on one side of the diff, no fields. */
function oneSided(
  input: PlanObjectInput,
  action: PlanAction,
  live: Obj | undefined,
  desired: Obj | undefined,
  o: PlanOptions,
): PlanEntry {
  return entry(input, action, [], [], render(input, live, desired, o));
}

/**
 * Desired against live. A refused dry run leaves only the manifest as written to compare: then
 * only the fields it sets count (there are no API-server defaults in it), and the object is a
 * change whatever they say (the API server refuses to apply it as it stands).
 */
function compared(input: PlanObjectInput, desiredObject: Obj, liveObject: Obj, o: PlanOptions): PlanEntry {
  const refused = input.refused !== undefined;
  const desired = cleanObject(desiredObject);
  let live = withoutOthersMetadata(cleanObject(liveObject), desired);
  if (refused) live = projectOnto(live, desired) as Obj;
  const changed = changedLeaves(live, desired, { onlySet: refused });
  if (changed.length === 0 && !refused) return entry(input, 'unchanged', [], [], '');
  return entry(
    input,
    'change',
    changed.map(formatPointer),
    handEditors(liveObject, changed),
    render(input, live, desired, o),
  );
}

/** Who, besides the release, owns the live values the change would overwrite, in field order. */
function handEditors(live: Obj, changed: readonly string[][]): string[] {
  const managers = new Set<string>();
  for (const segments of changed)
    for (const m of fieldManagers(live, segments)) if (!OWN_MANAGERS.has(m)) managers.add(m);
  return [...managers];
}

function render(input: PlanObjectInput, live: Obj | undefined, desired: Obj | undefined, o: PlanOptions): string {
  const shown = o.showSecrets ? { live, desired } : maskPair(input.kind, live, desired);
  const title = `${input.kind} ${input.name}${input.namespace ? ` (${input.namespace})` : ''}`;
  return unifiedDiff(title, shown.live, shown.desired);
}

function entry(
  input: PlanObjectInput,
  action: PlanAction,
  fields: string[],
  changedBy: string[],
  diff: string,
): PlanEntry {
  return {
    apiVersion: input.apiVersion,
    kind: input.kind,
    name: input.name,
    ...(input.namespace !== undefined ? { namespace: input.namespace } : {}),
    action,
    ...(input.hook !== undefined ? { hook: input.hook } : {}),
    fields,
    changedBy,
    diff,
    ...(input.refused !== undefined ? { refused: input.refused } : {}),
    ...(input.recreate !== undefined ? { recreate: input.recreate } : {}),
  };
}
