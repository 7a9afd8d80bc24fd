// The StorageClasses, IngressClasses, PriorityClasses and RuntimeClasses a chart names, and those
// the cluster does not have: a claim whose class does not exist stays Pending and its pods
// unschedulable, an Ingress no controller serves, a pod the API server refuses (an unknown
// PriorityClass) or the kubelet cannot run (an unknown RuntimeClass). Known before any change, so
// named then (exit 3) with the classes the cluster has. Pure.
import type { Obj } from '../cluster/object-client.js';
import { at, isObj, podTemplates } from './pod-templates.js';

export type ClassKind = 'StorageClass' | 'IngressClass' | 'PriorityClass' | 'RuntimeClass';

export const CLASS_KINDS: Record<ClassKind, { apiVersion: string; resource: string; value: string }> = {
  StorageClass: {
    apiVersion: 'storage.k8s.io/v1',
    resource: 'storageclasses',
    value: 'persistence.storageClass, storageClassName',
  },
  IngressClass: {
    apiVersion: 'networking.k8s.io/v1',
    resource: 'ingressclasses',
    value: 'ingress.className, ingressClassName',
  },
  PriorityClass: { apiVersion: 'scheduling.k8s.io/v1', resource: 'priorityclasses', value: 'priorityClassName' },
  RuntimeClass: { apiVersion: 'node.k8s.io/v1', resource: 'runtimeclasses', value: 'runtimeClassName' },
};

export interface ClassReference {
  kind: ClassKind;
  name: string;
  /** `PersistentVolumeClaim/data`, `StatefulSet/db volumeClaimTemplates`, `Deployment/web`. */
  by: string;
}

/** Every class the rendered objects name (an empty storageClassName asks for none: not named). */
export function classReferences(objects: readonly Obj[]): ClassReference[] {
  const refs: ClassReference[] = [];
  const add = (kind: ClassKind, name: unknown, by: string) => {
    if (typeof name === 'string' && name !== '') refs.push({ kind, name, by });
  };
  for (const o of objects) {
    const id = `${o.kind}/${String(at(o, ['metadata'])?.name ?? '')}`;
    if (o.kind === 'PersistentVolumeClaim') add('StorageClass', at(o, ['spec'])?.storageClassName, id);
    if (o.kind === 'Ingress') add('IngressClass', at(o, ['spec'])?.ingressClassName, id);
    if (o.kind === 'StatefulSet') {
      const claims = at(o, ['spec'])?.volumeClaimTemplates;
      for (const c of Array.isArray(claims) ? claims : [])
        if (isObj(c)) add('StorageClass', at(c, ['spec'])?.storageClassName, `${id} volumeClaimTemplates`);
    }
  }
  for (const t of podTemplates(objects)) {
    add('PriorityClass', t.spec.priorityClassName, t.owner);
    add('RuntimeClass', t.spec.runtimeClassName, t.owner);
  }
  return refs;
}

export interface MissingClass {
  kind: ClassKind;
  name: string;
  by: string[];
  /** The classes of this kind the cluster has (`standard (default)`). */
  existing: string[];
}

/**
 * The classes named that neither the cluster (`existing`, by kind; a kind not read is not judged)
 * nor the chart itself (`made`: kind/name of the rendered objects) has.
 */
export function missingClasses(
  refs: readonly ClassReference[],
  existing: Partial<Record<ClassKind, string[]>>,
  made: ReadonlySet<string>,
): MissingClass[] {
  const out = new Map<string, MissingClass>();
  for (const r of refs) {
    const have = existing[r.kind];
    if (!have || made.has(`${r.kind}/${r.name}`) || have.some((h) => h.replace(/ \(default\)$/, '') === r.name))
      continue;
    const key = `${r.kind}/${r.name}`;
    const seen = out.get(key) ?? { kind: r.kind, name: r.name, by: [], existing: have };
    seen.by.push(r.by);
    out.set(key, seen);
  }
  return [...out.values()];
}

/** The lines of the error: each missing class, what names it, and what the cluster has. */
export function describeMissingClasses(missing: readonly MissingClass[]): string[] {
  return missing.map(
    (m) =>
      `${m.kind} ${m.name} (named by ${m.by.join(', ')}) does not exist; the cluster has: ${m.existing.length > 0 ? m.existing.join(', ') : 'none'}`,
  );
}

/** The next step: the values that usually name each missing kind. */
export function missingClassesHint(missing: readonly MissingClass[]): string {
  const values = [...new Set(missing.map((m) => CLASS_KINDS[m.kind].value))].join('; ');
  return `Set the chart's values to a class the cluster has (values such as ${values}), or have the cluster admin create the class; nothing was changed.`;
}
