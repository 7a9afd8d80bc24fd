// Whether the pods a chart asks for fit the namespace's ResourceQuotas: the pods, CPU and memory
// its workloads request in all (replicas times each pod's requests and limits) against each
// quota's hard limit and what is used already. Pure. A DaemonSet's or CronJob's pods are not
// counted (how many depends on the nodes and the schedule).
import type { Obj } from '../cluster/object-client.js';
import { isObj, podTemplates } from './pod-templates.js';

export interface QuotaState {
  name: string;
  hard: Record<string, string>;
  used: Record<string, string>;
}

export interface QuotaShortfall {
  quota: string;
  /** `pods=3, requests.cpu=1500m` the chart needs in all, where it does not fit. */
  needs: string;
  hard: string;
  used: string;
  /** True when it would not fit even in an empty namespace (the quota's hard limit alone). */
  neverFits: boolean;
}

const COUNTED = ['pods', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'] as const;
type Counted = (typeof COUNTED)[number];
/** A quota's `cpu` and `memory` are its `requests.*`. */
const ALIAS: Record<string, Counted> = { cpu: 'requests.cpu', memory: 'requests.memory' };

/** Pure: what the chart's pods need in all, per counted resource. */
export function podDemand(objects: readonly Obj[]): Map<Counted, number> {
  const total = new Map<Counted, number>(COUNTED.map((k) => [k, 0]));
  for (const t of podTemplates(objects)) {
    const kind = t.owner.split('/')[0];
    const o = objects.find((x) => `${x.kind}/${String((x.metadata as Obj | undefined)?.name ?? '')}` === t.owner);
    const spec = isObj(o?.spec) ? o.spec : {};
    const replicas =
      kind === 'Pod'
        ? 1
        : kind === 'Job'
          ? Number(spec.parallelism ?? 1)
          : ['Deployment', 'StatefulSet', 'ReplicaSet', 'ReplicationController'].includes(kind!)
            ? Number(spec.replicas ?? 1)
            : 0;
    if (!(replicas > 0)) continue;
    total.set('pods', total.get('pods')! + replicas);
    for (const k of COUNTED.slice(1)) total.set(k, total.get(k)! + replicas * podAmount(t.spec, k));
  }
  return total;
}

/** A pod's effective amount: the containers' sum, or the largest init container's if larger. */
function podAmount(spec: Obj, key: Counted): number {
  const [section, resource] = key.split('.') as ['requests' | 'limits', string];
  const amount = (c: unknown) => {
    const r = isObj(c) && isObj(c.resources) ? c.resources : {};
    // A limit without a request: the API server defaults the request to the limit.
    const value =
      (isObj(r[section]) ? r[section][resource] : undefined) ??
      (section === 'requests' && isObj(r.limits) ? r.limits[resource] : undefined);
    return value === undefined ? 0 : parseQuantity(String(value));
  };
  const list = (v: unknown) => (Array.isArray(v) ? v : []);
  const main = list(spec.containers).reduce((s: number, c) => s + amount(c), 0);
  return Math.max(main, ...list(spec.initContainers).map(amount));
}

/** Pure: each quota the chart's pods do not fit, or not beside what is used already. */
export function quotaShortfalls(demand: Map<Counted, number>, quotas: readonly QuotaState[]): QuotaShortfall[] {
  const out: QuotaShortfall[] = [];
  for (const q of quotas) {
    const short: { key: string; need: number; hard: number; used: number }[] = [];
    for (const [key, hardText] of Object.entries(q.hard)) {
      const counted: Counted | undefined =
        ALIAS[key] ?? ((COUNTED as readonly string[]).includes(key) ? (key as Counted) : undefined);
      const need = counted ? (demand.get(counted) ?? 0) : 0;
      if (need === 0) continue;
      const hard = parseQuantity(hardText);
      const used = parseQuantity(q.used[key] ?? '0');
      if (need > hard - used) short.push({ key, need, hard, used });
    }
    if (short.length === 0) continue;
    const show = (key: string, n: number) => `${key}=${formatAmount(key, n)}`;
    out.push({
      quota: q.name,
      needs: short.map((s) => show(s.key, s.need)).join(', '),
      hard: short.map((s) => show(s.key, s.hard)).join(', '),
      used: short.map((s) => show(s.key, s.used)).join(', '),
      neverFits: short.some((s) => s.need > s.hard),
    });
  }
  return out;
}

/** Pure: a Kubernetes quantity (`500m`, `64Mi`, `1.5Gi`, `2`, `1e3`) as a number. */
export function parseQuantity(q: string): number {
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/.exec(q.trim());
  if (!m) return Number.NaN;
  const factor: Record<string, number> = {
    n: 1e-9,
    u: 1e-6,
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
  };
  return Number(m[1]) * (m[2] ? factor[m[2]]! : 1);
}

/** CPU in millicores, memory in Mi when whole, pods as a count. */
function formatAmount(key: string, n: number): string {
  if (/cpu/.test(key)) return `${Math.round(n * 1000)}m`;
  if (/memory/.test(key)) return n % 2 ** 20 === 0 ? `${n / 2 ** 20}Mi` : String(Math.round(n));
  return String(Math.round(n));
}
