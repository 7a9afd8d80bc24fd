// The pod template of a rendered object, wherever its kind keeps it.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- rendered YAML, each field checked where it is read
export type Obj = Record<string, any>;

/** The pod spec of a workload (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob). */
export function podSpecOf(o: Obj): Obj | undefined {
  if (o.kind === 'Pod') return o.spec;
  if (o.kind === 'CronJob') return o.spec?.jobTemplate?.spec?.template?.spec;
  return ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job'].includes(o.kind)
    ? o.spec?.template?.spec
    : undefined;
}
