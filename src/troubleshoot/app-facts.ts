// What the Troubleshoot specs check, read from the objects the app's charts render (pure): the
// Kubernetes versions each chart allows, the cluster-scoped classes and CRDs its objects need,
// the resources its workloads request, and what Pod Security would refuse.
import { podSecurityFindings, type PodSecurityFinding } from './pod-security.js';
import { podSpecOf, type Obj } from './pod-spec.js';

/** One release of the app as rendered: its chart and every object `render` prints, hooks included. */
export interface ReleaseRender {
  release: string;
  namespace: string;
  chart: { name: string; version: string; kubeVersion?: string };
  objects: readonly Obj[];
}

export type ClassKind = 'StorageClass' | 'IngressClass' | 'PriorityClass' | 'RuntimeClass';

/** A name some object needs to exist in the cluster, and who needs it (`release: Kind/name`). */
export interface Needed {
  name: string;
  by: string[];
}

export interface AppFacts {
  kubeVersions: { release: string; chart: string; range: string }[];
  classes: Record<ClassKind, Needed[]>;
  /** CRDs (`<plural>.<group>`) of custom objects the charts render but no release ships. */
  crds: Needed[];
  /** What the Deployments and StatefulSets request at their replica counts: millicores, bytes. */
  requests: { cpuMillis: number; memoryBytes: number };
  podSecurity: PodSecurityFinding[];
  /** The app's workloads, for their status analyzers. */
  workloads: { kind: 'Deployment' | 'StatefulSet'; namespace: string; name: string }[];
  namespaces: string[];
}

// Groups the API server serves itself: an object of any other group needs its CRD (or an
// aggregated API) first. A group without a dot is a built-in one too (apps, batch, policy).
const BUILT_IN_GROUPS = /^([a-z0-9-]+|[a-z0-9.-]+\.k8s\.io)$/;

export function appFacts(releases: ReleaseRender[]): AppFacts {
  const objects = releases.flatMap((r) => r.objects.map((o) => ({ r, o })));
  const owner = (r: ReleaseRender, o: Obj) => `${r.release}: ${o.kind}/${o.metadata?.name ?? ''}`;
  const classes: AppFacts['classes'] = { StorageClass: [], IngressClass: [], PriorityClass: [], RuntimeClass: [] };
  const shipped = new Set(
    objects.filter(({ o }) => o.kind === 'CustomResourceDefinition').map(({ o }) => String(o.metadata?.name)),
  );
  const crds: Needed[] = [];
  for (const { r, o } of objects) {
    for (const [kind, name] of classesNamed(o)) need(classes[kind], name, owner(r, o));
    const crd = crdOf(o);
    if (crd && !shipped.has(crd)) need(crds, crd, owner(r, o));
  }
  for (const list of [...Object.values(classes), crds]) list.sort((a, b) => a.name.localeCompare(b.name));
  const workloads = objects
    .filter(
      ({ o }) =>
        (o.kind === 'Deployment' || o.kind === 'StatefulSet') &&
        o.apiVersion === 'apps/v1' &&
        !o.metadata?.annotations?.['helm.sh/hook'],
    )
    .map(({ r, o }) => ({
      kind: o.kind as 'Deployment' | 'StatefulSet',
      namespace: o.metadata?.namespace ?? r.namespace,
      name: String(o.metadata?.name),
      o,
    }));
  return {
    kubeVersions: releases
      .filter((r) => r.chart.kubeVersion)
      .map((r) => ({ release: r.release, chart: `${r.chart.name} ${r.chart.version}`, range: r.chart.kubeVersion! })),
    classes,
    crds,
    requests: totalRequests(workloads.map((w) => w.o)),
    podSecurity: podSecurityFindings(
      objects.map(({ r, o }) => ({ release: r.release, namespace: o.metadata?.namespace ?? r.namespace, object: o })),
    ),
    workloads: workloads
      .map(({ kind, namespace, name }) => ({ kind, namespace, name }))
      .sort((a, b) => `${a.kind}/${a.name}`.localeCompare(`${b.kind}/${b.name}`)),
    // The releases' namespaces, and any other an object names for itself.
    namespaces: [
      ...new Set([
        ...releases.map((r) => r.namespace),
        ...objects.map(({ o }) => o.metadata?.namespace).filter((n): n is string => typeof n === 'string' && n !== ''),
      ]),
    ].sort(),
  };
}

function need(list: Needed[], name: string, by: string): void {
  const found = list.find((n) => n.name === name);
  if (!found) list.push({ name, by: [by] });
  else if (!found.by.includes(by)) found.by.push(by);
}

function classesNamed(o: Obj): [ClassKind, string][] {
  const out: [ClassKind, string][] = [];
  const pod = podSpecOf(o);
  if (pod?.priorityClassName) out.push(['PriorityClass', String(pod.priorityClassName)]);
  if (pod?.runtimeClassName) out.push(['RuntimeClass', String(pod.runtimeClassName)]);
  if (o.kind === 'Ingress' && o.spec?.ingressClassName) out.push(['IngressClass', String(o.spec.ingressClassName)]);
  // "" asks for no dynamic provisioning: no class to find.
  if (o.kind === 'PersistentVolumeClaim' && o.spec?.storageClassName)
    out.push(['StorageClass', String(o.spec.storageClassName)]);
  if (o.kind === 'StatefulSet')
    for (const t of o.spec?.volumeClaimTemplates ?? [])
      if (t?.spec?.storageClassName) out.push(['StorageClass', String(t.spec.storageClassName)]);
  return out;
}

/** `<plural>.<group>` of a custom object's kind; the plural as the API server's default (lower case + s/es/ies). */
function crdOf(o: Obj): string | undefined {
  const apiVersion = String(o.apiVersion ?? '');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  if (group === '' || BUILT_IN_GROUPS.test(group) || typeof o.kind !== 'string') return undefined;
  return `${plural(o.kind.toLowerCase())}.${group}`;
}

function plural(kind: string): string {
  if (/(s|x|z|ch|sh)$/.test(kind)) return `${kind}es`;
  if (/[^aeiou]y$/.test(kind)) return `${kind.slice(0, -1)}ies`;
  return `${kind}s`;
}

function totalRequests(workloads: Obj[]): AppFacts['requests'] {
  let cpuMillis = 0;
  let memoryBytes = 0;
  for (const w of workloads) {
    const replicas = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 1;
    for (const c of podSpecOf(w)?.containers ?? []) {
      cpuMillis += replicas * cpuOf(c.resources?.requests?.cpu);
      memoryBytes += replicas * bytesOf(c.resources?.requests?.memory);
    }
  }
  return { cpuMillis, memoryBytes };
}

function cpuOf(q: unknown): number {
  if (q === undefined || q === null) return 0;
  const s = String(q);
  return s.endsWith('m') ? Number(s.slice(0, -1)) || 0 : Math.round((Number(s) || 0) * 1000);
}

const UNITS: Record<string, number> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  '': 1,
};

function bytesOf(q: unknown): number {
  if (q === undefined || q === null) return 0;
  const m = /^([0-9.]+)([KMGT]i|[kMGT])?$/.exec(String(q));
  return m ? Math.round(Number(m[1]) * UNITS[m[2] ?? '']!) : 0;
}
