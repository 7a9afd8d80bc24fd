// What every output format says the same way: the counts, an object's name, the decision.
import { describeOrphans } from '../drift/orphaned-claims.js';
import type {
  PlanAction,
  PlanApiMapping,
  PlanClaimsAtRisk,
  PlanCrd,
  PlanDecision,
  PlanEntry,
  PlanOwnership,
  PlanRecreate,
} from './plan-types.js';

export type ActionCounts = Record<PlanAction, number>;

/** terraform's and helm-diff's marks: + create, ~ change, - delete. */
export const SIGN: Record<PlanAction, string> = { create: '+', change: '~', delete: '-', unchanged: ' ' };

export function countActions(entries: readonly PlanEntry[]): ActionCounts {
  const counts: ActionCounts = { create: 0, change: 0, delete: 0, unchanged: 0 };
  for (const e of entries) counts[e.action]++;
  return counts;
}

/**
 * `3 to create, 2 to change, 1 to delete`, every part always there (a script can split it):
 * the Job's termination message in plan-only mode. Hooks are not counted (pass `entries`, not
 * `hooks`): helm re-runs them on every install, so a count with them would never be zero.
 */
export function countLine(entries: readonly PlanEntry[]): string {
  const c = countActions(entries);
  return `${c.create} to create, ${c.change} to change, ${c.delete} to delete`;
}

/** `Deployment shop/web`; a cluster-scoped object `ClusterRole reader`. */
export function objectName(e: Pick<PlanEntry, 'kind' | 'name' | 'namespace'>): string {
  return `${e.kind} ${e.namespace ? `${e.namespace}/` : ''}${e.name}`;
}

/** `Would upgrade: <reason>`, `Would do nothing: <reason>`. */
export function decisionLine(d: PlanDecision): string {
  return `Would ${d.action === 'nothing' ? 'do nothing' : d.action}: ${d.reason}`;
}

/**
 * One line of text from the API server or the chart, safe for a terminal: control characters
 * (an ANSI escape in a refusal message could repaint the screen) written as \xNN, line breaks as
 * spaces.
 */
export function oneLine(text: string): string {
  return text
    .replace(/\s*[\r\n]+\s*/g, ' ')
    .replace(
      /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g,
      (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
    );
}

/** `update CRD widgets.example.com (crds/): fields +v1: spec.color: ...`, one line. */
export function crdLine(c: PlanCrd): string {
  const parts = [
    `${c.action === 'unchanged' ? 'keep' : c.action} CRD ${c.name} (${c.origin === 'crds' ? 'crds/' : 'templates, applied by helm'})`,
  ];
  if (c.changes) parts.push(c.changes);
  if (c.migrate) parts.push(migrateLine(c.migrate));
  if (c.adopt) parts.push('no release owns it: adopted by this release');
  return parts.map(oneLine).join(': ');
}

/** `3 objects rewritten in v1 first (through a CRD serving v1alpha1 and v1), then v1alpha1 dropped from its stored versions` */
function migrateLine(m: NonNullable<PlanCrd['migrate']>): string {
  const drop = m.drop.join(', ');
  if (m.objects === 0) return `no object stored: ${drop} dropped from its stored versions`;
  return `${m.objects} ${m.objects === 1 ? 'object' : 'objects'} rewritten in ${m.storage} first (through a CRD serving ${drop} and ${m.storage}), then ${drop} dropped from its stored versions`;
}

/** The claims an upgrade leaves behind, a line each, then what install does about them. */
export function dataAtRiskLines(risks: readonly PlanClaimsAtRisk[]): string[] {
  if (risks.length === 0) return [];
  const lines = risks.map((r) =>
    oneLine(
      describeOrphans({ statefulSet: { name: r.statefulSet, namespace: r.namespace }, kept: r.kept, claims: r.claims }),
    ),
  );
  const policy = risks[0]!.policy;
  const then =
    policy === 'refuse'
      ? "install refuses this upgrade before any change (exit 3; --orphaned-claims refuse): reuse the claims with the chart's existing-claim value, or allow it"
      : 'install upgrades and leaves these claims as they are, unmounted (--orphaned-claims allow)';
  return [...lines, then];
}

/** What install does first to an object whose field cannot change, and why. */
export function recreateLine(r: PlanRecreate): string {
  const how =
    r.how === 'orphan'
      ? 'deleted alone (its pods and PVCs stay; the new one adopts them)'
      : 'deleted with what it owns (PVCs stay)';
  return `recreated before the upgrade: ${r.fields.join(', ')} cannot change; ${how}, then helm creates it`;
}

/** The stored record's removed APIs, as install maps them before helm: a heading and one line each. */
export function removedApiLines(mappings: readonly PlanApiMapping[]): string[] {
  if (mappings.length === 0) return [];
  return [
    'Removed APIs in the stored record (the cluster no longer serves them; install rewrites the record first, keeping the original):',
    ...mappings.map((m) => {
      const object = `${m.kind}/${m.namespace ? `${m.namespace}/` : ''}${m.name}`;
      return m.to === null
        ? `revision ${m.revision}: ${object}: ${m.from} dropped (removed in Kubernetes ${m.removedIn} with no successor)`
        : `revision ${m.revision}: ${object}: ${m.from} -> ${m.to} (removed in Kubernetes ${m.removedIn})`;
    }),
  ];
}

/** What install does about an existing object's owner, one line. */
export function ownershipLine(o: PlanOwnership): string {
  const owner = o.owner ? `release ${o.owner.release} in namespace ${o.owner.namespace || '(none)'}` : '';
  switch (o.outcome) {
    case 'adopted':
      return 'no release owns it: adopted by this release (--take-ownership)';
    case 'taken':
      return `owned by ${owner}: taken over by this release (--take-ownership always)`;
    case 'refused':
      return `owned by ${owner}: install refuses it (exit 4, nothing changed); uninstall it there, or --take-ownership always takes it`;
  }
}
