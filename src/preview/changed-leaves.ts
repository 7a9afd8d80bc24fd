// Which leaves differ between the cleaned live and desired objects, as parsed JSON pointers. The
// same walk as the drift check's (src/drift/compare-objects.ts): keys sorted at each level (the
// list does not depend on the order the API server wrote them in), lists compared item by item
// (a list item inserted in front shows every later item as changed, as in the drift report), and
// a value present on one side only is one entry, not one per leaf under it. Pure.
import { sameJson } from '../drift/managed-fields.js';
import { isMap, own } from './clean-object.js';

/** `onlySet`: compare only the fields `desired` has (a manifest as written, no dry run). */
export function changedLeaves(live: unknown, desired: unknown, o: { onlySet?: boolean } = {}): string[][] {
  const out: string[][] = [];
  walk(live, desired, [], out, o.onlySet === true);
  return out;
}

function walk(live: unknown, desired: unknown, at: string[], out: string[][], onlySet: boolean): void {
  if (sameJson(live, desired)) return;
  if (desired === undefined && onlySet) return;
  if (isMap(live) && isMap(desired)) {
    const keys = [...new Set([...Object.keys(desired), ...Object.keys(live)])].sort();
    for (const key of keys) walk(own(live, key), own(desired, key), [...at, key], out, onlySet);
  } else if (Array.isArray(live) && Array.isArray(desired)) {
    for (let i = 0; i < Math.max(live.length, desired.length); i++)
      walk(live[i], desired[i], [...at, String(i)], out, onlySet);
  } else {
    out.push(at);
  }
}
