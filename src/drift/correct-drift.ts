// Puts drifted objects back: a real server-side apply, with force and helm's own field manager, of
// each drifted object as the manifest has it. Force takes back the fields someone else changed
// (and their ownership, so helm's next upgrade does not conflict on them); a missing object is
// created the same way. Fields under an ignore rule are left as they are live. An object the API
// server refuses to change (an immutable field) is returned as failed with the field named: the
// caller falls back to an upgrade with helm's own handling.
import { clusterDiscovery } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus, isTransientApiError } from '../cluster/kube-errors.js';
import { driftApiError, HELM_FIELD_MANAGER, mapBounded, type DriftOptions, type ObjectDrift } from './detect-drift.js';
import { ignoredPaths } from './ignore-rules.js';
import { differences } from './compare-objects.js';
import { formatPointer, getAt, parsePointer, removeAt, setAt } from './json-pointer.js';
import { fieldManagers } from './managed-fields.js';
import { manifestObjects, placeObjects, type PlacedObject } from './manifest-objects.js';
import { objectClient, type JsonPatchOp, type Obj, type ObjectClient } from '../cluster/object-client.js';
import { refusal } from './refusal.js';

export interface CorrectionResult {
  corrected: ObjectDrift[];
  failed: { drift: ObjectDrift; reason: string }[];
}

const CONCURRENCY = 16;

/** Re-applies each drifted object, as helm's own field manager (the one helm's next runs use). */
export async function correctDrift(
  kube: KubeClients,
  manifest: string,
  drifts: readonly ObjectDrift[],
  o: DriftOptions,
): Promise<CorrectionResult> {
  const result: CorrectionResult = { corrected: [], failed: [] };
  if (drifts.length === 0) return result;
  const [resources, client] = await Promise.all([
    o.resources ?? clusterDiscovery(kube.config).then((d) => d.resources),
    objectClient(kube, o.signal),
  ]);
  const placed = placeObjects(manifestObjects(manifest), resources, o);
  const outcomes = await mapBounded(drifts, CONCURRENCY, async (drift) => {
    const p = placed.find(
      (x) =>
        x.kind === drift.kind &&
        x.apiVersion === drift.apiVersion &&
        x.name === drift.name &&
        x.namespace === drift.namespace,
    );
    if (!p) return `not in the release's manifest`;
    if (!p.path) return `the cluster does not serve ${p.apiVersion} ${p.kind}`;
    return putBack(kube, client, p, drift, o);
  });
  outcomes.forEach((reason, i) =>
    reason === undefined ? result.corrected.push(drifts[i]!) : result.failed.push({ drift: drifts[i]!, reason }),
  );
  return result;
}

/** undefined when put back, else why not. RBAC and an unreachable server are thrown. */
async function putBack(
  kube: KubeClients,
  client: ObjectClient,
  p: PlacedObject,
  drift: ObjectDrift,
  o: DriftOptions,
): Promise<string | undefined> {
  const manager = o.fieldManager ?? HELM_FIELD_MANAGER;
  const ignored = ignoredPaths(o.rules, p);
  const live = drift.missing
    ? undefined
    : await client.get(p.path!).catch((error: unknown) => {
        throw driftApiError(kube, error, p, 'get');
      });
  // A missing object is created whole, as helm would: ignore rules are about fields others own.
  const body = live ? keepIgnored(p.body, live, ignored, manager) : p.body;
  const verb = live ? 'patch' : 'create';
  const refused = await attempt(kube, p, verb, () =>
    client.apply(p.path!, body, { fieldManager: manager, dryRun: false }),
  );
  if (refused === undefined || !live) return refused;
  // Refused although nothing immutable changed, e.g. a Service port edited in place: apply keys
  // ports by number, so it would add port 80 beside the edited 8081 under the same name. Set the
  // fields back where they are first, then apply again so helm owns them as before.
  const ops = repairOps(p.body, live, ignored);
  if (ops.length === 0) return refused;
  return attempt(kube, p, verb, async () => {
    await client.jsonPatch(p.path!, ops, manager);
    await client.apply(p.path!, body, { fieldManager: manager, dryRun: false });
  });
}

/** undefined when fn succeeded; the API server's refusal as text; anything else thrown. */
async function attempt(
  kube: KubeClients,
  p: PlacedObject,
  verb: 'patch' | 'create',
  fn: () => Promise<unknown>,
): Promise<string | undefined> {
  try {
    await fn();
    return undefined;
  } catch (error) {
    const status = apiStatus(error);
    if (status === 401 || status === 403 || isTransientApiError(error) || status === undefined)
      throw driftApiError(kube, error, p, verb);
    return refusal(error);
  }
}

/** Pure. JSON patch operations that set each field the manifest sets back to its value, in place. */
export function repairOps(body: Obj, live: Obj, ignored: readonly string[]): JsonPatchOp[] {
  const ops = new Map<string, JsonPatchOp>();
  for (const d of differences(body, live, ignored, { onlySet: true })) {
    if (d.live !== undefined) {
      ops.set(formatPointer(d.segments), { op: 'replace', path: formatPointer(d.segments), value: d.desired });
      continue;
    }
    // A JSON patch adds only under an existing parent: add the highest missing one, whole.
    let at = d.segments;
    while (at.length > 1 && getAt(live, at.slice(0, -1)) === undefined) at = at.slice(0, -1);
    ops.set(formatPointer(at), {
      op: 'add',
      path: formatPointer(at),
      value: at === d.segments ? d.desired : getAt(body, at),
    });
  }
  return [...ops.values()];
}

/**
 * Pure. The object to apply with the ignored paths left to whoever holds them. A path another
 * manager owns (an HPA's replicas) is removed, as Flux does: helm gives up its claim and the
 * value stays. A path only helm owns keeps its live value instead: removed, the apply would drop
 * the field and it would fall back to its default (replicas 3 -> 1).
 */
export function keepIgnored(body: Obj, live: Obj, paths: readonly string[], helmManager: string): Obj {
  if (paths.length === 0) return body;
  const out = structuredClone(body);
  for (const path of paths) {
    const segments = parsePointer(path);
    const value = getAt(live, segments);
    const others = fieldManagers(live, segments).some((m) => m !== helmManager);
    if (others || value === undefined || !setAt(out, segments, structuredClone(value))) removeAt(out, segments);
  }
  return out;
}
