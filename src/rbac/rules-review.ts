// Deciding permissions from the rules a SelfSubjectRulesReview lists (what `kubectl auth can-i
// --list` shows): one request per namespace instead of one SelfSubjectAccessReview per verb and
// resource. Pure. The rules only ever say yes: RBAC has no deny, so a rule that matches grants.
// Everything they do not grant is asked again with an access review (the API server's own
// answer), so a denial, and the message naming it, never rests on this matching:
// - a review marked incomplete (a webhook authorizer, which may also deny): nothing is decided
//   from it, every permission in its namespace is asked;
// - a rule limited to resourceNames: it grants only requests for those names, and the preflight
//   asks without a name (as before), so such a rule grants nothing here;
// - a permission on a cluster-scoped resource: a review for a namespace mixes the rules of that
//   namespace's RoleBindings (which grant nothing cluster-wide) with the ClusterRoleBindings'.
import type { Permission } from './required-permissions.js';

/** A resource rule as the rules review returns it (authorization.k8s.io/v1 ResourceRule). */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

export interface RulesReview {
  resourceRules: ResourceRule[];
  incomplete: boolean;
}

/**
 * Whether the rule grants the verb on the resource for any object name, as Kubernetes' RBAC
 * matches it (rbac/v1 VerbMatches, APIGroupMatches, ResourceMatches): `*` anywhere, a
 * subresource written `pods/log` or `* /log` (without the space).
 */
export function ruleGrants(rule: ResourceRule, p: Pick<Permission, 'group' | 'resource' | 'verb'>): boolean {
  if (rule.resourceNames && rule.resourceNames.length > 0) return false;
  if (!rule.verbs.some((v) => v === '*' || v === p.verb)) return false;
  if (!(rule.apiGroups ?? []).some((g) => g === '*' || g === p.group)) return false;
  const subresource = p.resource.includes('/') ? p.resource.slice(p.resource.indexOf('/') + 1) : '';
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === p.resource || (subresource !== '' && r === `*/${subresource}`),
  );
}

/**
 * Splits the permissions into those the namespaces' rules reviews grant and those to ask with an
 * access review (see the file's head for which). `reviews`: per namespace; a namespace without
 * one (not reviewed, or its review failed) is asked.
 */
export function decideByRules(
  permissions: Permission[],
  reviews: ReadonlyMap<string, RulesReview>,
): { granted: Permission[]; ask: Permission[] } {
  const granted: Permission[] = [];
  const ask: Permission[] = [];
  for (const p of permissions) {
    const review = p.namespace === undefined ? undefined : reviews.get(p.namespace);
    const grants = review !== undefined && !review.incomplete && review.resourceRules.some((r) => ruleGrants(r, p));
    (grants ? granted : ask).push(p);
  }
  return { granted, ask };
}
