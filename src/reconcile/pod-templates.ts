// The pod templates of rendered objects, for the checks that ask the cluster about the pods a
// release would make before it makes them. Pure.
import type { Obj } from '../cluster/object-client.js';

export interface PodTemplate {
  /** `Deployment/web`, `CronJob/report`, `Pod/debug`. */
  owner: string;
  /** The object's namespace as written (undefined: the release namespace). */
  namespace?: string;
  metadata: Obj;
  spec: Obj;
}

const TEMPLATE_AT: Record<string, string[]> = {
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  Job: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
  Pod: [],
};

export function podTemplates(objects: readonly Obj[]): PodTemplate[] {
  const out: PodTemplate[] = [];
  for (const o of objects) {
    const path = TEMPLATE_AT[String(o.kind)];
    if (!path) continue;
    const template = at(o, path);
    const spec = template?.spec;
    if (!isObj(spec)) continue;
    const metadata = isObj(o.metadata) ? o.metadata : {};
    out.push({
      owner: `${o.kind}/${String(metadata.name ?? '')}`,
      namespace: typeof metadata.namespace === 'string' ? metadata.namespace : undefined,
      metadata: isObj(template?.metadata) ? template.metadata : {},
      spec,
    });
  }
  return out;
}

export function at(o: unknown, path: string[]): Obj | undefined {
  let v: unknown = o;
  for (const k of path) v = isObj(v) ? v[k] : undefined;
  return isObj(v) ? v : undefined;
}

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
