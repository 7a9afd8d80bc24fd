// The diff a person reads: both sides as YAML (what they wrote the chart in), then a unified diff
// (jsdiff), three lines of context like diff -u and git. Pure.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatch } from 'diff';
import { stringify } from 'yaml';
import { isMap } from './clean-object.js';
import type { Obj } from './plan-types.js';

const CONTEXT = 3;
// Myers' diff costs (lines) x (edits): two unrelated 20,000-line ConfigMaps would take seconds and
// a lot of memory. Past this many changed lines the diff is shown as all removed, all added.
const MAX_EDIT_LENGTH = 2000;

/** YAML as kubectl prints it: keys in object order, no line folding, no anchors. '' for none. */
export function toYaml(o: Obj | undefined): string {
  return o === undefined ? '' : stringify(o, { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * `--- live <title>` / `+++ desired` and the hunks; '' when both sides print the same. One side
 * undefined: a create (all '+') or a delete (all '-').
 */
export function unifiedDiff(
  title: string,
  live: Obj | undefined,
  desired: Obj | undefined,
  o: { maxEditLength?: number } = {},
): string {
  const oldText = toYaml(live);
  const newText = toYaml(live && desired ? (alignKeys(desired, live) as Obj) : desired);
  if (oldText === newText) return '';
  const [oldName, newName] = [`live ${title}`, 'desired'];
  const maxEditLength = o.maxEditLength ?? MAX_EDIT_LENGTH;
  const patch =
    structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength }) ??
    wholeReplacement(oldName, newName, oldText, newText);
  return formatPatch(patch, FILE_HEADERS_ONLY);
}

function wholeReplacement(oldFileName: string, newFileName: string, oldText: string, newText: string): StructuredPatch {
  const oldLines = lines(oldText);
  const newLines = lines(newText);
  const hunk = {
    oldStart: oldLines.length > 0 ? 1 : 0,
    oldLines: oldLines.length,
    newStart: newLines.length > 0 ? 1 : 0,
    newLines: newLines.length,
    lines: [...oldLines.map((l) => `-${l}`), ...newLines.map((l) => `+${l}`)],
  };
  return { oldFileName, newFileName, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

function lines(text: string): string[] {
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/**
 * `desired` with its keys in live's order (keys only desired has stay after the key they follow
 * there). The API server writes built-in kinds in one order, but a custom resource's dry-run
 * result can come back in another than the stored object: the diff would move every field.
 */
export function alignKeys(desired: unknown, live: unknown): unknown {
  if (Array.isArray(desired))
    return desired.map((item, i) => alignKeys(item, Array.isArray(live) ? live[i] : undefined));
  if (!isMap(desired)) return desired;
  const liveKeys = isMap(live) ? Object.keys(live) : [];
  return Object.fromEntries(
    alignedOrder(Object.keys(desired), liveKeys).map((k) => [
      k,
      alignKeys(desired[k], isMap(live) && Object.hasOwn(live, k) ? live[k] : undefined),
    ]),
  );
}

function alignedOrder(desiredKeys: string[], liveKeys: string[]): string[] {
  const inDesired = new Set(desiredKeys);
  const shared = new Set(liveKeys.filter((k) => inDesired.has(k)));
  // Keys desired alone has, grouped behind the shared key before them (undefined: before any).
  const after = new Map<string | undefined, string[]>();
  let previous: string | undefined;
  for (const k of desiredKeys) {
    if (shared.has(k)) previous = k;
    else if (after.has(previous)) after.get(previous)!.push(k);
    else after.set(previous, [k]);
  }
  const order = [...(after.get(undefined) ?? [])];
  for (const k of liveKeys) if (shared.has(k)) order.push(k, ...(after.get(k) ?? []));
  return order;
}
