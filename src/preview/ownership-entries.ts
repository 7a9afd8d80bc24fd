// The plan's side of the owners step (reconcile/actions/check-owners.ts): the existing objects of
// the new chart, judged as install judges them (drift/ownership.ts), marked on their entries.
// Pure: the live objects are those the comparison already read.
import { judgeOwnership, type Claim, type ReleaseRef } from '../drift/ownership.js';
import type { PlanEntry, PlanObjectInput, PlanOwnership } from './plan-types.js';

/** `mode`: how helm adopts on the decided step (undefined: it adopts nothing, and nothing is marked). */
export function markOwnership(
  entries: PlanEntry[],
  objects: readonly PlanObjectInput[],
  ours: ReleaseRef,
  mode: 'always' | 'first-install' | undefined,
): PlanEntry[] {
  if (!mode) return entries;
  const existing = objects
    .filter((o) => o.hook === undefined && o.desired && o.live)
    .map((o) => ({ kind: o.kind, name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}), live: o.live! }));
  const verdict = judgeOwnership(existing, ours, mode);
  const marks = new Map<string, PlanOwnership>();
  const mark = (claims: Claim[], outcome: PlanOwnership['outcome']) => {
    for (const c of claims) marks.set(key(c), { outcome, ...(c.owner ? { owner: c.owner } : {}) });
  };
  mark(verdict.adopted, 'adopted');
  mark(verdict.taken, 'taken');
  mark(verdict.refused, 'refused');
  return entries.map((e) => (marks.has(key(e)) ? { ...e, ownership: marks.get(key(e))! } : e));
}

function key(o: { kind: string; name: string; namespace?: string }): string {
  return `${o.kind}/${o.namespace ?? ''}/${o.name}`;
}
