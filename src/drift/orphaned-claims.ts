// Which claims an upgrade would leave behind, pure: a StatefulSet's PVCs (`<template>-<sts>-<n>`)
// are owned by nothing and bound to a workload only by name, so a chart version that deletes or
// renames the StatefulSet, or renames its claim template, starts the app on new, empty claims
// while the old ones, with the data, stay unmounted (a database chart's major release does this;
// its upgrade notes tell people to reuse the old claim by hand). A claim is left behind when it
// holds data (Bound) and no workload of the new version mounts it: neither a StatefulSet whose
// claim template names it nor a pod template's persistentVolumeClaim.claimName (the charts'
// `existingClaim` value). A StatefulSet recreated with its claim template kept loses nothing.
import type { PlacedObject } from './manifest-objects.js';

type Obj = Record<string, unknown>;

/** A live PVC of a namespace the release has StatefulSets in. */
export interface LiveClaim {
  name: string;
  namespace: string;
  /** status.phase: only a Bound claim can hold data. */
  phase?: string;
}

export interface OrphanedClaims {
  /** The StatefulSet of the deployed revision whose claims these are. */
  statefulSet: { name: string; namespace: string };
  /** Whether the new version still has a StatefulSet of that name (its claim template renamed) or not (deleted or renamed). */
  kept: boolean;
  /** The claims no workload of the new version mounts, sorted. */
  claims: string[];
}

type Placed = Pick<PlacedObject, 'kind' | 'name' | 'namespace' | 'body'>;

export function orphanedClaims(
  previous: readonly Placed[],
  next: readonly Placed[],
  live: readonly LiveClaim[],
): OrphanedClaims[] {
  const out: OrphanedClaims[] = [];
  const nextSets = next.filter((o) => o.kind === 'StatefulSet');
  for (const old of previous.filter((o) => o.kind === 'StatefulSet')) {
    const namespace = old.namespace ?? '';
    const successor = nextSets.find((s) => s.name === old.name && (s.namespace ?? '') === namespace);
    const kept = new Set(successor ? claimTemplates(successor.body) : []);
    const claims = live
      .filter((c) => c.namespace === namespace && c.phase === 'Bound')
      .filter((c) => claimTemplates(old.body).some((t) => !kept.has(t) && isClaimOf(c.name, t, old.name)))
      .filter((c) => !mountedByNext(c, next, nextSets))
      .map((c) => c.name)
      .sort();
    if (claims.length > 0)
      out.push({ statefulSet: { name: old.name, namespace }, kept: successor !== undefined, claims });
  }
  return out;
}

/** `<template>-<statefulset>-<ordinal>`, the name the StatefulSet controller gives each pod's claim. */
export function isClaimOf(claim: string, template: string, statefulSet: string): boolean {
  const prefix = `${template}-${statefulSet}-`;
  return claim.startsWith(prefix) && /^\d+$/.test(claim.slice(prefix.length));
}

function claimTemplates(statefulSet: Obj): string[] {
  const templates =
    ((statefulSet.spec ?? {}) as { volumeClaimTemplates?: { metadata?: { name?: unknown } }[] }).volumeClaimTemplates ??
    [];
  return templates.map((t) => t.metadata?.name).filter((n): n is string => typeof n === 'string');
}

function mountedByNext(claim: LiveClaim, next: readonly Placed[], nextSets: readonly Placed[]): boolean {
  const here = (o: Placed) => (o.namespace ?? '') === claim.namespace;
  if (nextSets.some((s) => here(s) && claimTemplates(s.body).some((t) => isClaimOf(claim.name, t, s.name))))
    return true;
  return next.some((o) => here(o) && claimNames(o).includes(claim.name));
}

/** The claims a workload's pods mount by name (Pod, the controllers' pod templates, a CronJob's job template). */
export function claimNames(o: Pick<Placed, 'kind' | 'body'>): string[] {
  const spec = (o.body.spec ?? {}) as Obj;
  const podSpec = (() => {
    if (o.kind === 'Pod') return spec;
    if (o.kind === 'CronJob')
      return (((spec.jobTemplate as Obj | undefined)?.spec as Obj | undefined)?.template as Obj | undefined)?.spec;
    return (spec.template as Obj | undefined)?.spec;
  })() as { volumes?: { persistentVolumeClaim?: { claimName?: unknown } }[] } | undefined;
  return (podSpec?.volumes ?? [])
    .map((v) => v.persistentVolumeClaim?.claimName)
    .filter((n): n is string => typeof n === 'string');
}

/** One line per StatefulSet, for the refusal, the log and the plan. */
export function describeOrphans(o: OrphanedClaims): string {
  const what = o.kept ? 'keeps its name but not its claim template' : 'is deleted or renamed by the new chart version';
  return `StatefulSet ${o.statefulSet.name} in namespace ${o.statefulSet.namespace} ${what}; no workload of the new version mounts its claims, which hold data: ${o.claims.join(', ')}`;
}
