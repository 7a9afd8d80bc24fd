// RBAC preflight: before helm changes anything, ask the API server whether this identity (in a
// Job: its ServiceAccount) may do what the rendered chart needs. Without it a narrow Role surfaces
// as a helm failure halfway through an install, with a rollback that may itself be forbidden.
// One SelfSubjectRulesReview per namespace (as `kubectl auth can-i --list`) grants most of it;
// what its rules do not grant is asked one by one with SelfSubjectAccessReviews (as `kubectl auth
// can-i`), whose answer alone makes a denial (rules-review.ts says when). Each kind's resource and
// scope come from the run's one discovery read (capabilities.ts), and the release namespace's
// rules review is asked while helm renders (RbacQueries).
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuthorizationV1Api, KubeConfig, V1APIResource } from '@kubernetes/client-node';
import type { ResourceIndex, ResourceInfo } from '../cluster/capabilities.js';
import { kubeModule } from '../cluster/kube-client.js';
import { PreflightError, TransientError } from '../common/errors.js';
import type { Logger } from 'pino';
import {
  crdResources,
  describePermission,
  renderedObjects,
  requiredPermissions,
  type Permission,
  type RenderedObject,
} from './required-permissions.js';
import { decideByRules, type RulesReview } from './rules-review.js';

export interface RbacPreflightInput {
  /** The rendered chart, CRDs included (helm template --include-crds). */
  manifests: string;
  /** Undefined: the kubeconfig context's (in a pod: its ServiceAccount's), as helm does. */
  releaseNamespace?: string;
  /**
   * What the run uses but can do without (its Events, src/tell/events.ts): checked with the rest,
   * a denial is a warning naming it, never exit 6.
   */
  optional?: Permission[];
  /** Requests in flight at once. */
  concurrency?: number;
  /** Denials asked again this many times, this far apart, before they count (RBAC cache lag). */
  settleRetries?: number;
  settleDelayMs?: number;
}

export interface RbacPreflightResult {
  checked: number;
  /** Granted by the rules reviews' rules. */
  byRules: number;
  /** Asked with an access review each (before any settling retry). */
  asked: number;
  denied: Permission[];
  /** Optional permissions denied (warned about, the run goes on). */
  deniedOptional: Permission[];
}

/**
 * What the preflight asks or knows that needs no render, so a run can have it while helm renders:
 * the rules reviews, one per namespace, each asked once (a failed one: undefined, its permissions
 * are asked one by one), and the resource index of the run's discovery read (undefined when that
 * read failed: each apiVersion's discovery is then read on its own).
 */
export class RbacQueries {
  private readonly reviews = new Map<string, Promise<RulesReview | undefined>>();
  /** Access reviews asked before the render, by permission: the check's first pass reuses their answers. */
  private readonly answers = new Map<string, Promise<boolean>>();

  constructor(
    private readonly auth: AuthorizationV1Api,
    readonly discovery: ResourceDiscovery,
    readonly resources: Promise<ResourceIndex | undefined> = Promise.resolve(undefined),
  ) {}

  static of(kc: KubeConfig, resources?: Promise<ResourceIndex | undefined>): RbacQueries {
    return new RbacQueries(
      kc.makeApiClient(k8s.AuthorizationV1Api),
      kc.makeApiClient(ResourceDiscovery),
      resources?.catch(() => undefined),
    );
  }

  /**
   * Asks these access reviews now (a guess of what the render will need that no rules review
   * grants, e.g. the cluster-scoped CRD verbs), so the check finds them answered instead of
   * asking them after the render. A failed one is forgotten: the check asks it again.
   */
  prefetchAccess(permissions: Omit<Permission, 'for'>[]): void {
    for (const p of permissions) void this.allowed(p).catch(() => undefined);
  }

  /** One access review's answer, asked once. */
  allowed(p: Omit<Permission, 'for'>): Promise<boolean> {
    const key = describePermission(p);
    let answer = this.answers.get(key);
    if (!answer) {
      answer = this.askAgain(p);
      answer.catch(() => this.answers.delete(key));
      this.answers.set(key, answer);
    }
    return answer;
  }

  /** One access review asked now, whatever was answered before (a denial may be a binding not yet seen). */
  askAgain(p: Omit<Permission, 'for'>): Promise<boolean> {
    return accessAllowed(this.auth, p);
  }

  /** Starts the review of the namespace now (if not yet asked); answers when it is there. */
  review(namespace: string): Promise<RulesReview | undefined> {
    let review = this.reviews.get(namespace);
    if (!review) {
      review = this.auth
        .createSelfSubjectRulesReview({
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace } },
        })
        .then((r) => ({ resourceRules: r.status?.resourceRules ?? [], incomplete: r.status?.incomplete ?? true }))
        .catch(() => undefined);
      this.reviews.set(namespace, review);
    }
    return review;
  }
}

/** Exposes the discovery lookup KubernetesObjectApi keeps to itself (cached per apiVersion). */
// From the one-file bundle the install loads anyway (kube-client.ts): the package itself takes
// 0.35-1.6 s to load.
const k8s = await kubeModule();

class ResourceDiscovery extends k8s.KubernetesObjectApi {
  find(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

/** `kc`: the configuration the rest of the run uses (src/cluster/kube-client.ts loads it as helm does). */
export async function checkRbac(
  input: RbacPreflightInput,
  kc: KubeConfig,
  queries = RbacQueries.of(kc),
): Promise<RbacPreflightResult> {
  const objects = renderedObjects(input.manifests);
  const resolved = await resolveResources(objects, queries);
  const releaseNamespace =
    input.releaseNamespace ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
  const permissions = requiredPermissions(objects, releaseNamespace, (o: RenderedObject) =>
    resolved.get(`${o.apiVersion}:${o.kind}`),
  );
  const optional = input.optional ?? [];
  const namespaces = [
    ...new Set([...permissions, ...optional].flatMap((p) => (p.namespace === undefined ? [] : [p.namespace]))),
  ];
  const reviews = new Map<string, RulesReview>();
  await Promise.all(
    namespaces.map(async (namespace) => {
      const review = await queries.review(namespace);
      if (review) reviews.set(namespace, review);
    }),
  );
  const { granted, ask } = decideByRules(permissions, reviews);
  const optionalRules = decideByRules(optional, reviews);
  const { denied, deniedOptional } = await askAccess(input, queries, ask, optionalRules.ask);
  return {
    checked: permissions.length + optional.length,
    byRules: granted.length + optionalRules.granted.length,
    asked: ask.length + optionalRules.ask.length,
    denied,
    deniedOptional,
  };
}

/** Each kind's resource and scope: from the run's discovery index, a CRD the chart defines, or discovery asked now. */
async function resolveResources(
  objects: RenderedObject[],
  queries: RbacQueries,
): Promise<Map<string, ResourceInfo | undefined>> {
  const fromCrds = crdResources(objects);
  const discovery = queries.discovery;
  const index = await queries.resources;
  const resolved = new Map<string, ResourceInfo | undefined>();
  const keys = [...new Set(objects.map((o) => `${o.apiVersion}:${o.kind}`))];
  const unindexed: string[] = [];
  for (const key of keys) {
    const known = index?.get(key);
    if (known) resolved.set(key, known);
    // Not served when the run read discovery: a CRD this chart defines (its own names and scope).
    else if (index && fromCrds.has(key)) resolved.set(key, fromCrds.get(key));
    else unindexed.push(key);
  }
  // Anything else (no index: the run's discovery read failed; a kind served since) is read from
  // discovery per apiVersion, all at once (each is a round trip before helm may start).
  const first = new Map<string, string>();
  for (const key of unindexed)
    if (!first.has(key.slice(0, key.lastIndexOf(':')))) first.set(key.slice(0, key.lastIndexOf(':')), key);
  const lookup = async (key: string) => {
    const [apiVersion, kind] = [key.slice(0, key.lastIndexOf(':')), key.slice(key.lastIndexOf(':') + 1)];
    const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
    let found: V1APIResource | undefined;
    try {
      found = await discovery.find(apiVersion, kind);
    } catch (error) {
      // A group the server does not serve yet (a CRD this chart installs) answers 404.
      if (!fromCrds.has(key) && !isNotFound(error)) throw unreachable(error);
    }
    resolved.set(key, found ? { group, resource: found.name, namespaced: found.namespaced } : fromCrds.get(key));
  };
  // The first kind of each apiVersion fills the client's cache for that apiVersion; the rest hit it.
  await Promise.all([...first.values()].map(lookup));
  await Promise.all(unindexed.filter((k) => !resolved.has(k)).map(lookup));
  return resolved;
}

/** The access reviews the rules could not answer, asked again a few times before a denial counts. */
async function askAccess(
  input: RbacPreflightInput,
  queries: RbacQueries,
  ask: Permission[],
  askOptional: Permission[],
): Promise<{ denied: Permission[]; deniedOptional: Permission[] }> {
  // The first pass takes answers asked before the render (RbacQueries.prefetchAccess) as they are.
  const concurrency = input.concurrency ?? 32;
  let [denied, deniedOptional] = await Promise.all([
    deniedOf((p) => queries.allowed(p), ask, concurrency),
    deniedOf((p) => queries.allowed(p), askOptional, concurrency),
  ]);
  // `kubectl apply -f manifests/` creates the Role and the Job together; the API server's RBAC
  // cache may not have the new binding yet when the pod starts. Ask again before failing for good
  // (an optional permission alone is not worth the wait: it is asked again only beside the others).
  for (let i = 0; denied.length && i < (input.settleRetries ?? 3); i++) {
    await sleep(input.settleDelayMs ?? 2000);
    [denied, deniedOptional] = await Promise.all([
      deniedOf((p) => queries.askAgain(p), denied, concurrency),
      deniedOf((p) => queries.askAgain(p), deniedOptional, concurrency),
    ]);
  }
  denied.sort((a, b) => describePermission(a).localeCompare(describePermission(b)));
  return { denied, deniedOptional };
}

/** One SelfSubjectAccessReview (as `kubectl auth can-i`). */
async function accessAllowed(auth: AuthorizationV1Api, p: Omit<Permission, 'for'>): Promise<boolean> {
  const review = await auth.createSelfSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          group: p.group,
          ...resourceAttributes(p.resource),
          verb: p.verb,
          ...(p.namespace ? { namespace: p.namespace } : {}),
        },
      },
    },
  });
  return review.status?.allowed === true;
}

async function deniedOf(
  allowed: (p: Permission) => Promise<boolean>,
  permissions: Permission[],
  concurrency: number,
): Promise<Permission[]> {
  const denied: Permission[] = [];
  let next = 0;
  const worker = async () => {
    while (next < permissions.length) {
      const p = permissions[next++]!;
      let ok;
      try {
        ok = await allowed(p);
      } catch (error) {
        throw unreachable(error);
      }
      if (!ok) denied.push(p);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, permissions.length) }, worker));
  return denied;
}

/** Runs the check and turns a denial into exit 6 naming each missing permission; an optional one denied is a warning. */
export async function rbacPreflight(
  input: RbacPreflightInput,
  logger: Logger,
  kc: KubeConfig,
  queries?: RbacQueries,
): Promise<void> {
  const result = await checkRbac(input, kc, queries);
  logger.info(
    { checked: result.checked, byRules: result.byRules, asked: result.asked, denied: result.denied.length },
    'rbac preflight',
  );
  for (const p of result.deniedOptional) {
    const permission = describePermission(p);
    logger.warn(
      { permission },
      `RBAC: this identity may not ${permission}: the install goes on without ${p.for.join(', ')} (grant it to have them; see the README, "RBAC")`,
    );
  }
  if (!result.denied.length) return;
  throw new PreflightError(
    `RBAC: this identity lacks ${result.denied.length} permission(s) the chart needs:\n${groupDenied(result.denied).join('\n')}`,
    {
      hint: 'Grant these verbs to the installer\'s ServiceAccount (a Role in the release namespace, a ClusterRole for cluster-wide kinds; see the README, "RBAC"), then run again. Nothing was changed.',
    },
  );
}

/** One line per resource and namespace: `  deployments.apps in namespace shop: create, delete (Deployment/web)`. */
export function groupDenied(denied: Permission[]): string[] {
  const groups = new Map<string, { verbs: string[]; for: Set<string> }>();
  for (const p of denied) {
    const where = describePermission({ ...p, verb: '' }).trim();
    const g = groups.get(where) ?? { verbs: [], for: new Set<string>() };
    g.verbs.push(p.verb);
    p.for.forEach((f) => g.for.add(f));
    groups.set(where, g);
  }
  return [...groups].map(([where, g]) => {
    const objects = [...g.for];
    return `  ${where}: ${g.verbs.sort().join(', ')} (${objects.slice(0, 3).join(', ')}${objects.length > 3 ? ', ...' : ''})`;
  });
}

/** `pods/log` is resource `pods`, subresource `log` in an access review (RBAC rules write it joined). */
function resourceAttributes(resource: string): { resource: string; subresource?: string } {
  const [name, subresource] = resource.split('/');
  return subresource ? { resource: name!, subresource } : { resource: name! };
}

function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: number }).code === 404;
}

function unreachable(error: unknown): TransientError {
  const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
  return new TransientError(`RBAC preflight: cannot ask the API server: ${message}`, {
    hint: 'Check that the cluster is reachable from the pod (KUBERNETES_SERVICE_HOST, network policies); the Job retries.',
  });
}
