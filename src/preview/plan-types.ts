// The plan's data, shared by the cluster side (which fills PlanObjectInput from the dry run and
// the live objects) and the pure side (src/preview/*: entries, masking, diffs, output formats).
// The names are a contract with src/cli/commands/ and src/reconcile/: change them in both at once.

export type Obj = Record<string, unknown>;
export type PlanAction = 'create' | 'change' | 'delete' | 'unchanged';

/** One object as the cluster side found it. */
export interface PlanObjectInput {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** What the object would be after the install: the server-side apply dry-run result, or the
   *  manifest's object as written for a create. Undefined: the release would delete it (helm prunes
   *  objects the new chart drops). */
  desired?: Obj;
  /** The live object; undefined when it does not exist. */
  live?: Obj;
  /** The helm.sh/hook annotation's value when the object is a hook (listed apart, never diffed against live: helm re-creates hooks). */
  hook?: string;
  /** Why the API server refused the dry run (immutable field), when it did. */
  refused?: string;
  /** Recreated before helm upgrades (--recreate-immutable auto): a field that cannot change changed. */
  recreate?: PlanRecreate;
}

export interface PlanRecreate {
  /** Dotted, as the API server names them (`spec.serviceName`). */
  fields: string[];
  /** orphan: deleted alone (its pods and PVCs stay, the new object adopts them); delete: with what it owns (PVCs stay). */
  how: 'orphan' | 'delete';
}

export interface PlanEntry {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  action: PlanAction;
  hook?: string;
  /** JSON pointers of the changed leaves (e.g. /spec/replicas, /data/password). Empty for unchanged. For create/delete: []. */
  fields: string[];
  /** Field managers that own the live values about to change, other than helm ("kubectl-set", "kubectl-edit"): the change reverts a hand edit. */
  changedBy: string[];
  /** Unified diff of the cleaned YAML (live -> desired), secrets masked; '' for unchanged. For create: all '+', for delete: all '-'. */
  diff: string;
  refused?: string;
  recreate?: PlanRecreate;
  /** An existing object helm would adopt (--take-ownership), and what install does about its owner. */
  ownership?: PlanOwnership;
}

/**
 * adopted: no release owns it (made by kubectl apply); taken: another release owns it and
 * --take-ownership always takes it; refused: another release owns it, install exits 4 first.
 */
export interface PlanOwnership {
  outcome: 'adopted' | 'taken' | 'refused';
  /** The release that owns it now (taken, refused). */
  owner?: { release: string; namespace: string };
}

export interface PlanDecision {
  action: 'install' | 'upgrade' | 'recover' | 'correct drift' | 'nothing';
  reason: string;
}

/** A CRD of the chart and what install does to it before helm (src/crds/). */
export interface PlanCrd {
  name: string;
  /** crds/ (install's CRD step applies it) or templates (helm applies it). */
  origin: 'crds' | 'templates';
  action: 'create' | 'update' | 'unchanged';
  /** `versions +v2; storage v1 -> v2; fields +v1: spec.color`, for an update. */
  changes?: string;
  /** A storage migration: the objects rewritten in `storage` (through a CRD serving both), then `drop` pruned from storedVersions. */
  migrate?: { storage: string; drop: string[]; objects: number };
  /** A templates CRD no release owns, made this release's. */
  adopt?: boolean;
}

export interface PlanReport {
  release: string;
  namespace: string;
  chart: string;
  decision: PlanDecision;
  entries: PlanEntry[];
  hooks: PlanEntry[];
  /** The chart's CRDs when install would run helm; absent when there are none. */
  crds?: PlanCrd[];
  /** Objects of the stored record whose apiVersion the cluster no longer serves: install maps them first. */
  removedApis?: PlanApiMapping[];
  /** What the API server says of the release's pods before any change; absent when nothing. */
  refusals?: PlanRefusal[];
  /** Claims that hold data that no workload of the new version mounts (an upgrade only); absent when none. */
  dataAtRisk?: PlanClaimsAtRisk[];
}

/** One object of a stored record at a version the cluster no longer serves, and what install makes it (null: dropped). */
export interface PlanApiMapping {
  revision: number;
  kind: string;
  namespace?: string;
  name: string;
  from: string;
  to: string | null;
  removedIn: string;
}

/** A class the chart names that the cluster lacks, or a dry run of the pods refused or warned about. */
export interface PlanRefusal {
  /** `Deployment/web`; for a missing class, the class (`StorageClass/fast-ssd`). */
  object: string;
  /** pod-security, resource-quota, limit-range, admission-policy, admission-webhook, missing-class. */
  kind: string;
  /** True when install would stop on it (a missing class: exit 3; an enforced refusal: the pods never start). */
  blocks: boolean;
  message: string;
  wayOut: string[];
}

/** A StatefulSet of the deployed revision whose claims the upgrade leaves behind, and what install does about it. */
export interface PlanClaimsAtRisk {
  statefulSet: string;
  namespace: string;
  /** The new version still has a StatefulSet of this name (its claim template renamed). */
  kept: boolean;
  claims: string[];
  /** --orphaned-claims: refuse (install exits 3 before any change) or allow (upgrades, the claims stay unmounted). */
  policy: 'refuse' | 'allow';
}
