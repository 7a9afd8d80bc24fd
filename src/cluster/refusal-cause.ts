// Why the cluster refused a release's pods or cannot place them, and the way out, from the
// cluster's own words: the message of a ReplicaSet's ReplicaFailure condition or a FailedCreate
// Event (`pods "web-x" is forbidden: ...`: Pod Security admission, a ResourceQuota, a LimitRange,
// a ValidatingAdmissionPolicy, an admission webhook) or of a pod's PodScheduled=False condition
// (the scheduler). Pure: the message in, a kind and a few short lines for the admin out (each fits
// the failure summary's 300-character lines); the message itself is shown beside them.

export type RefusalKind =
  'pod-security' | 'resource-quota' | 'limit-range' | 'admission-policy' | 'admission-webhook' | 'scheduler' | 'other';

export interface Refusal {
  kind: RefusalKind;
  /** What to do, one short line each. */
  wayOut: string[];
}

export interface RefusalContext {
  namespace: string;
  /** The pod's nodeSelector, for the scheduler's "didn't match Pod's node affinity/selector". */
  nodeSelector?: Record<string, string>;
}

/** Pure: the kind of refusal a creation or scheduling message names, and the way out. */
export function classifyRefusal(message: string, ctx: RefusalContext): Refusal {
  const m = message.replace(/\s+/g, ' ').trim();
  return (
    podSecurity(m, ctx) ??
    resourceQuota(m, ctx) ??
    admissionPolicy(m) ??
    admissionWebhook(m) ??
    limitRange(m, ctx) ??
    scheduler(m, ctx) ?? {
      kind: 'other',
      wayOut: ['the cluster refused to create the pods with the message above: fix what it names, then run again'],
    }
  );
}

/** `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set ...), ...` */
function podSecurity(m: string, ctx: RefusalContext): Refusal | undefined {
  const found = /(would violate|violates) PodSecurity "([a-z]+)(?::([^"]+))?": (.*)$/.exec(m);
  if (!found) return undefined;
  const [, verb, level, version = 'latest', rest] = found;
  const violations = splitTopLevel(rest!).slice(0, 6);
  // A namespace that only warns (or audits) answers "would violate"; one that enforces refuses.
  const mode = verb === 'violates' ? 'enforce' : 'warn';
  return {
    kind: 'pod-security',
    wayOut: [
      `namespace ${ctx.namespace} ${mode === 'enforce' ? 'enforces' : 'warns on'} Pod Security "${level}:${version}" (label pod-security.kubernetes.io/${mode}=${level}); the pods must fix:`,
      ...violations.map((v) => `  - ${v}`),
      'charts set these through values such as podSecurityContext (the pod) and securityContext or containerSecurityContext (each container)',
      `or, where the cluster admin allows it: kubectl label namespace ${ctx.namespace} pod-security.kubernetes.io/${mode}=baseline --overwrite`,
    ],
  };
}

/** `exceeded quota: tight, requested: pods=1, used: pods=1, limited: pods=1`, `failed quota: q: must specify limits.cpu for: app` */
function resourceQuota(m: string, ctx: RefusalContext): Refusal | undefined {
  const exceeded = /exceeded quota: ([^,]+), requested: (.*?), used: (.*?), limited: (.*?)$/.exec(m);
  if (exceeded) {
    const [, name, requested, used, hard] = exceeded;
    return {
      kind: 'resource-quota',
      wayOut: [
        `ResourceQuota ${name} has no room: requested ${requested}, used ${used}, hard ${hard}`,
        `raise it (kubectl -n ${ctx.namespace} edit resourcequota ${name}), free room in namespace ${ctx.namespace}, or lower the chart's replicas or resources.requests`,
      ],
    };
  }
  const unspecified = /failed quota: ([^:]+): (must specify .*)$/.exec(m);
  if (!unspecified) return undefined;
  return {
    kind: 'resource-quota',
    wayOut: [
      `ResourceQuota ${unspecified[1]} requires it: ${unspecified[2]}`,
      `set them in the chart's values (resources.requests and resources.limits of each container), or have a LimitRange in namespace ${ctx.namespace} give defaults`,
    ],
  };
}

/** `ValidatingAdmissionPolicy 'name' with binding 'b' denied request: message` */
function admissionPolicy(m: string): Refusal | undefined {
  const found = /ValidatingAdmissionPolicy '([^']+)' with binding '([^']+)' denied request: (.*)$/.exec(m);
  if (!found) return undefined;
  return {
    kind: 'admission-policy',
    wayOut: [
      `ValidatingAdmissionPolicy ${found[1]} (binding ${found[2]}) denied the pods: ${found[3]}`,
      `change the values so the pods meet it, or ask the cluster admin (kubectl get validatingadmissionpolicy ${found[1]} -o yaml)`,
    ],
  };
}

/** `admission webhook "x" denied the request: ...`, `failed calling webhook "x": ...` */
function admissionWebhook(m: string): Refusal | undefined {
  const denied = /admission webhook "([^"]+)" denied the request:? ?(.*)$/.exec(m);
  if (denied) {
    return {
      kind: 'admission-webhook',
      wayOut: [
        `admission webhook ${denied[1]} denied the pods${denied[2] ? `: ${denied[2]}` : ''}`,
        'change the values so the pods meet its policy, or ask the cluster admin who runs the webhook',
      ],
    };
  }
  const failed = /failed calling webhook "([^"]+)": (.*)$/.exec(m);
  if (!failed) return undefined;
  return {
    kind: 'admission-webhook',
    wayOut: [
      `admission webhook ${failed[1]} could not be called: ${failed[2]}`,
      'the cluster admin should fix the webhook (its Service and pods) or its failurePolicy',
    ],
  };
}

/** `maximum cpu usage per Container is 500m, but limit is 1`, `minimum memory usage per Pod is ...`, `cpu max limit to request ratio per Container is 2, ...` */
function limitRange(m: string, ctx: RefusalContext): Refusal | undefined {
  const found = [
    ...m.matchAll(
      /((?:maximum|minimum) \S+ usage per (?:Container|Pod) is [^,\]]+, but (?:limit|request) is [^,\]]+|\S+ max limit to request ratio per (?:Container|Pod) is [^,\]]+, but provided ratio is [^,\]]+)/g,
    ),
  ].map((x) => x[1]!);
  if (found.length === 0) return undefined;
  return {
    kind: 'limit-range',
    wayOut: [
      `a LimitRange in namespace ${ctx.namespace} bounds the pods: ${found.join('; ')}`,
      `set the chart's resources (resources.requests and resources.limits) within it (kubectl -n ${ctx.namespace} describe limitrange)`,
    ],
  };
}

/** `0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu. preemption: ...` */
function scheduler(m: string, ctx: RefusalContext): Refusal | undefined {
  if (!/nodes are available|unbound immediate PersistentVolumeClaims|no nodes available/.test(m)) return undefined;
  const why = m.replace(/ preemption: .*$/, '');
  const out: string[] = [];
  if (/didn't match Pod's node affinity\/selector/.test(why)) {
    const selector = Object.entries(ctx.nodeSelector ?? {}).map(([k, v]) => `${k}=${v}`);
    out.push(
      `no node has the labels the pods ask for${selector.length > 0 ? ` (nodeSelector ${selector.join(', ')})` : ' (their node affinity)'}: fix the chart's nodeSelector or affinity values, or label a node (kubectl get nodes --show-labels)`,
    );
  }
  // Before Kubernetes 1.33 the scheduler named the taint (`{key: value}`); since, only `taint(s)`.
  const taints = [...why.matchAll(/untolerated taint(?:\(s\))?(?: (\{[^}]*\}))?/g)].map((x) => x[1]);
  if (taints.length > 0) {
    const named = [...new Set(taints.filter((t) => t !== undefined))];
    out.push(
      `nodes carry taints the pods do not tolerate${named.length > 0 ? ` (${named.join(', ')})` : ' (kubectl describe nodes | grep Taints)'}: add tolerations in the chart's values, or schedule elsewhere`,
    );
  }
  const short = [...new Set([...why.matchAll(/Insufficient ([\w./-]*[\w/-])/g)].map((x) => x[1]!))];
  if (short.length > 0)
    out.push(
      `no node has room for the pods' requests of ${short.join(', ')}: lower the chart's resources.requests or replicas, or add capacity`,
    );
  if (/unbound immediate PersistentVolumeClaims/.test(why)) {
    out.push(
      `a PersistentVolumeClaim of the pods is not bound: kubectl -n ${ctx.namespace} get pvc (its StorageClass must exist and provision, or a PersistentVolume must match)`,
    );
  }
  if (/volume node affinity conflict/.test(why))
    out.push(
      "the pods' volumes are bound to nodes the pods cannot run on (volume node affinity): check the PersistentVolumes and the pods' placement",
    );
  if (/didn't have free ports/.test(why))
    out.push("the nodes have the pods' hostPort in use: change or remove the chart's hostPort");
  if (out.length === 0)
    out.push(
      "no node can take the pods (the scheduler's words above): fix the placement or the requests, or add nodes",
    );
  return { kind: 'scheduler', wayOut: out };
}

/** Pure: `a (x, y), b (z)` split at the commas outside parentheses and quotes. */
export function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '(' || c === '[' || c === '{')) depth++;
    else if (!quoted && (c === ')' || c === ']' || c === '}')) depth--;
    else if (!quoted && depth === 0 && c === ',' && s[i + 1] === ' ') {
      parts.push(s.slice(start, i).trim());
      start = i + 2;
    }
  }
  parts.push(s.slice(start).trim());
  return parts.filter((p) => p.length > 0);
}
