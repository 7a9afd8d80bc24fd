// The plan for a program (-o json). A stable schema: fields are added, never renamed or removed,
// without a new schemaVersion.
//
// {
//   "schemaVersion": 1,
//   "release": string, "namespace": string, "chart": string,
//   "decision": { "action": "install" | "upgrade" | "recover" | "correct drift" | "nothing", "reason": string },
//   "summary": { "create": n, "change": n, "delete": n, "unchanged": n },   (objects only, hooks not counted)
//   "objects": [ Object, ... ],   every object of the release, unchanged ones included, in manifest order
//   "hooks": [ Object, ... ]      the chart's hooks: always "create" (helm re-creates them)
//   "crds": [ Crd, ... ]          the chart's CRDs, when install would run helm (absent without CRDs)
//   "removedApis": [ { "revision", "kind", "namespace"?, "name", "from", "to" (null: dropped), "removedIn" } ]
//                                 objects of the stored record at versions the cluster no longer serves,
//                                 which install maps first (absent when there are none)
//   "refusals": [ Refusal, ... ]  what the API server says of the pods before any change (absent when nothing)
//   "dataAtRisk": [ Risk, ... ]   claims an upgrade leaves behind (absent when none)
// }
// Refusal: { "object": "Deployment/web" | "StorageClass/fast-ssd", "kind": "pod-security" | "resource-quota" |
//   "limit-range" | "admission-policy" | "admission-webhook" | "missing-class", "blocks": true when install
//   would stop on it, "message": the API server's words, "wayOut": [lines] }
// Risk: { "statefulSet", "namespace", "kept": the new version keeps the StatefulSet's name, "claims": [names],
//   "policy": "refuse" (install exits 3 before any change) | "allow" (--orphaned-claims allow: upgraded, claims left) }
// Crd: { "name", "origin": "crds" | "templates", "action": "create" | "update" | "unchanged",
//   "changes": "versions +v2; storage v1 -> v2; fields +v1: spec.color" (updates),
//   "migrate": { "storage", "drop": [versions], "objects": n } (objects rewritten first), "adopt": true (made this release's) }
// Object: {
//   "apiVersion", "kind", "namespace" (absent when cluster-scoped), "name",
//   "action": "create" | "change" | "delete" | "unchanged",
//   "fields": JSON pointers (RFC 6901) of the changed values, [] unless "change",
//   "changedBy": field managers other than helm owning a value the change overwrites (a hand edit: "kubectl-edit"),
//   "hook": the helm.sh/hook annotation (hooks only),
//   "refused": why the API server refused the dry run (when it did),
//   "recreate": { "fields": ["spec.serviceName"], "how": "orphan" | "delete" } when install recreates it first (a field that cannot change),
//   "ownership": { "outcome": "adopted" | "taken" | "refused", "owner": { "release", "namespace" } } for an existing object helm adopts
//     (--take-ownership): refused means install exits 4 (another release owns it),
//   "diff": unified diff of the YAML, live -> desired, secrets masked unless --show-secrets; "" when unchanged
// }
import type { PlanApiMapping, PlanClaimsAtRisk, PlanCrd, PlanEntry, PlanRefusal, PlanReport } from './plan-types.js';
import { countActions, type ActionCounts } from './summary.js';

const PLAN_SCHEMA_VERSION = 1;

interface PlanJsonObject {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  action: PlanEntry['action'];
  fields: string[];
  changedBy: string[];
  hook?: string;
  refused?: string;
  recreate?: PlanEntry['recreate'];
  ownership?: PlanEntry['ownership'];
  diff: string;
}

export interface PlanJson {
  schemaVersion: typeof PLAN_SCHEMA_VERSION;
  release: string;
  namespace: string;
  chart: string;
  decision: { action: PlanReport['decision']['action']; reason: string };
  summary: ActionCounts;
  objects: PlanJsonObject[];
  hooks: PlanJsonObject[];
  crds?: PlanCrd[];
  removedApis?: PlanApiMapping[];
  refusals?: PlanRefusal[];
  dataAtRisk?: PlanClaimsAtRisk[];
}

export function planJson(report: PlanReport): PlanJson {
  return {
    schemaVersion: PLAN_SCHEMA_VERSION,
    release: report.release,
    namespace: report.namespace,
    chart: report.chart,
    decision: { action: report.decision.action, reason: report.decision.reason },
    summary: countActions(report.entries),
    objects: report.entries.map(jsonObject),
    hooks: report.hooks.map(jsonObject),
    ...(report.crds ? { crds: report.crds } : {}),
    ...(report.removedApis?.length ? { removedApis: report.removedApis } : {}),
    ...(report.refusals && report.refusals.length > 0 ? { refusals: report.refusals } : {}),
    ...(report.dataAtRisk ? { dataAtRisk: report.dataAtRisk } : {}),
  };
}

/** Two-space indented, newline-terminated. */
export function formatJson(report: PlanReport): string {
  return `${JSON.stringify(planJson(report), null, 2)}\n`;
}

// Built key by key: the output's key order is part of what a reader sees, not the entry's.
function jsonObject(e: PlanEntry): PlanJsonObject {
  return {
    apiVersion: e.apiVersion,
    kind: e.kind,
    ...(e.namespace !== undefined ? { namespace: e.namespace } : {}),
    name: e.name,
    action: e.action,
    fields: [...e.fields],
    changedBy: [...e.changedBy],
    ...(e.hook !== undefined ? { hook: e.hook } : {}),
    ...(e.refused !== undefined ? { refused: e.refused } : {}),
    ...(e.recreate !== undefined ? { recreate: { fields: [...e.recreate.fields], how: e.recreate.how } } : {}),
    ...(e.ownership !== undefined
      ? {
          ownership: {
            outcome: e.ownership.outcome,
            ...(e.ownership.owner ? { owner: { ...e.ownership.owner } } : {}),
          },
        }
      : {}),
    diff: e.diff,
  };
}
