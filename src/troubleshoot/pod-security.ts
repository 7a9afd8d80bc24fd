// What Pod Security admission would refuse of the pods the charts render (pure): the checks of
// the baseline and restricted levels (kubernetes.io/docs/concepts/security/pod-security-standards)
// that a pod template shows, each named by its field. A namespace enforcing a level the app's
// pods break takes the Deployment and fails its pods (ReplicaSet FailedCreate): the preflight says
// so before the install.
import { podSpecOf, type Obj } from './pod-spec.js';

type Level = 'baseline' | 'restricted';

export interface PodSecurityFinding {
  namespace: string;
  /** The lowest level that refuses: restricted refuses what baseline does, and more. */
  level: Level;
  /** One per object: `release: Kind/name: field, field` */
  violations: string[];
}

const BASELINE_CAPS = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);
const RESTRICTED_VOLUMES = [
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'persistentVolumeClaim',
  'projected',
  'secret',
];

export function podSecurityFindings(
  objects: { release: string; namespace: string; object: Obj }[],
): PodSecurityFinding[] {
  const found = new Map<string, PodSecurityFinding>();
  for (const { release, namespace, object } of objects) {
    const pod = podSpecOf(object);
    if (!pod) continue;
    const where = `${release}: ${object.kind}/${object.metadata?.name ?? ''}`;
    const path = podPath(object);
    for (const [level, fields] of [
      ['baseline', baselineViolations(pod)],
      ['restricted', restrictedViolations(pod)],
    ] as const) {
      if (fields.length === 0) continue;
      const key = `${namespace} ${level}`;
      const finding = found.get(key) ?? { namespace, level, violations: [] };
      finding.violations.push(`${where}: ${fields.map((f) => `${path}${f}`).join(', ')}`);
      found.set(key, finding);
    }
  }
  return [...found.values()].sort((a, b) => `${a.namespace} ${a.level}`.localeCompare(`${b.namespace} ${b.level}`));
}

function podPath(o: Obj): string {
  if (o.kind === 'Pod') return 'spec.';
  return o.kind === 'CronJob' ? 'spec.jobTemplate.spec.template.spec.' : 'spec.template.spec.';
}

type Container = { name?: string; securityContext?: Obj; ports?: { hostPort?: number }[] };

function containers(pod: Obj): { path: string; c: Container }[] {
  return (['initContainers', 'containers', 'ephemeralContainers'] as const).flatMap((k) =>
    ((pod[k] ?? []) as Container[]).map((c, i) => ({ path: `${k}[${i}]`, c })),
  );
}

function baselineViolations(pod: Obj): string[] {
  const out: string[] = [];
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC']) if (pod[k] === true) out.push(`${k}=true`);
  (pod.volumes ?? []).forEach((v: Obj, i: number) => v?.hostPath && out.push(`volumes[${i}].hostPath`));
  for (const { path, c } of containers(pod)) {
    const sc = c.securityContext ?? {};
    if (sc.privileged === true) out.push(`${path}.securityContext.privileged=true`);
    const added = ((sc.capabilities?.add ?? []) as string[]).filter((cap) => !BASELINE_CAPS.has(cap));
    if (added.length) out.push(`${path}.securityContext.capabilities.add=${added.join(',')}`);
    (c.ports ?? []).forEach((p, i) => p?.hostPort && out.push(`${path}.ports[${i}].hostPort=${p.hostPort}`));
  }
  return out;
}

function restrictedViolations(pod: Obj): string[] {
  const out = baselineViolations(pod);
  const podSc = pod.securityContext ?? {};
  (pod.volumes ?? []).forEach((v: Obj, i: number) => {
    const type = Object.keys(v ?? {}).find((k) => k !== 'name');
    if (type && type !== 'hostPath' && !RESTRICTED_VOLUMES.includes(type)) out.push(`volumes[${i}].${type}`);
  });
  if (podSc.runAsUser === 0) out.push('securityContext.runAsUser=0');
  for (const { path, c } of containers(pod)) {
    const sc = c.securityContext ?? {};
    const at = `${path}.securityContext`;
    if (sc.allowPrivilegeEscalation !== false) out.push(`${at}.allowPrivilegeEscalation != false`);
    if (!((sc.capabilities?.drop ?? []) as string[]).includes('ALL')) out.push(`${at}.capabilities.drop lacks ALL`);
    const added = ((sc.capabilities?.add ?? []) as string[]).filter(
      (cap) => cap !== 'NET_BIND_SERVICE' && BASELINE_CAPS.has(cap),
    );
    if (added.length) out.push(`${at}.capabilities.add=${added.join(',')}`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${at}.runAsNonRoot != true`);
    if (sc.runAsUser === 0) out.push(`${at}.runAsUser=0`);
    const seccomp = sc.seccompProfile?.type ?? podSc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost')
      out.push(`${at}.seccompProfile.type unset (RuntimeDefault or Localhost)`);
  }
  return out;
}
