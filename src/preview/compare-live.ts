// The cluster side of a plan: what each object of the release would become, against what is live.
// The chart as install would apply it (the render setup's render, rewritten) against the live objects
// (drift/read-live.ts: one list per kind and namespace), and the last deployed manifest for what helm
// would prune. An object that already holds every field the chart sets, as written, is unchanged
// without a request; any other is asked of a server-side apply dry run with helm's field manager
// (defaults, webhooks and quantities as the API server writes them), as the drift check does.
import type { ResourceIndex } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus } from '../cluster/kube-errors.js';
import { compareObjects, setAsWritten } from '../drift/compare-objects.js';
import { formatPointer, isUnder, removeAt } from '../drift/json-pointer.js';
import { sameJson } from '../drift/managed-fields.js';
import { driftApiError, HELM_FIELD_MANAGER, mapBounded, type ObjectDrift } from '../drift/detect-drift.js';
import { ignoredPaths, type IgnoreRule } from '../drift/ignore-rules.js';
import { manifestObjects, placeObjects, type PlacedObject } from '../drift/manifest-objects.js';
import type { Obj, ObjectClient } from '../cluster/object-client.js';
import { isSchemaRefusal, refusal } from '../drift/refusal.js';
import { inCrdsFolder, piecesWithSource } from '../crds/chart-crds.js';
import type { PlanObjectInput } from './plan-types.js';
import { objectKey, readLive } from '../drift/read-live.js';

export interface CompareInput {
  /** The chart as install would apply it: hooks and the chart's crds/ included. */
  rendered: string;
  /** The last deployed revision's manifest; undefined before the first install. */
  lastManifest?: string;
  /** No release yet: the chart's crds/ are created (helm never upgrades them). */
  firstInstall: boolean;
  resources: ResourceIndex;
  releaseNamespace: string;
  release: string;
  rules: IgnoreRule[];
}

export interface Compared {
  objects: PlanObjectInput[];
  /** The objects that are missing or differ, as the drift check names them: the decision's input. */
  drift: ObjectDrift[];
}

const CONCURRENCY = 16;
const HOOK = 'helm.sh/hook';

export async function compareWithLive(kube: KubeClients, client: ObjectClient, c: CompareInput): Promise<Compared> {
  const place = (text: string) =>
    placeObjects(manifestObjects(text), c.resources, { releaseNamespace: c.releaseNamespace, release: c.release });
  const { templates, crds } = splitChartCrds(c.rendered);
  const all = place(templates);
  const hooks = all.filter((p) => hookOf(p) !== undefined);
  const desired = all.filter((p) => hookOf(p) === undefined);
  const desiredKeys = new Set(desired.map(objectKey));
  // helm prunes what the new chart dropped, unless the object asks to be kept.
  const last = c.lastManifest === undefined ? [] : place(c.lastManifest);
  const lastBodies = new Map(last.map((p) => [objectKey(p), p.body]));
  const dropped = last.filter((p) => !desiredKeys.has(objectKey(p)) && !keep(p));
  const chartCrds = place(crds).filter((p) => !desiredKeys.has(objectKey(p)));
  const live = await readLive(kube, client, [...desired, ...dropped, ...chartCrds]);

  const drift: ObjectDrift[] = [];
  const compared = await mapBounded(desired, CONCURRENCY, async (p) => {
    const found = await desiredState(
      kube,
      client,
      p,
      { live: live.get(objectKey(p)), last: lastBodies.get(objectKey(p)) },
      ignoredPaths(c.rules, p),
    );
    if (found.drift) drift.push(found.drift);
    return found.input;
  });
  return {
    objects: [
      // crds/ only on a first install, and only those not there yet: helm creates them once.
      ...chartCrds
        .filter((p) => c.firstInstall && !live.has(objectKey(p)))
        .map((p) => ({ ...identity(p), desired: p.body })),
      ...compared,
      ...dropped.flatMap((p) => (live.has(objectKey(p)) ? [{ ...identity(p), live: live.get(objectKey(p)) }] : [])),
      ...hooks.map((p) => ({ ...identity(p), hook: hookOf(p), desired: p.body })),
    ],
    drift: order(drift, desired),
  };
}

/**
 * `last`: the object as the last deployed revision applied it. An object the chart changed is
 * always asked of the dry run (holding every field as written says nothing of the fields the new
 * chart stopped setting), and those fields are taken out of its result as helm takes them out.
 */
async function desiredState(
  kube: KubeClients,
  client: ObjectClient,
  p: PlacedObject,
  state: { live?: Obj; last?: Obj },
  ignored: string[],
): Promise<{ input: PlanObjectInput; drift?: ObjectDrift }> {
  const id = identity(p);
  const { live, last } = state;
  if (!live) return { input: { ...id, desired: p.body }, drift: { ...id, missing: true, fields: [] } };
  const sameInChart = last !== undefined && sameJson(last, p.body);
  if (sameInChart && setAsWritten(p.body, live, ignored)) return { input: { ...id, desired: live, live } };
  try {
    const result = withoutDroppedFields(
      await client.apply(p.path!, p.body, { fieldManager: HELM_FIELD_MANAGER, dryRun: true }),
      last,
      p.body,
      ignored,
    );
    const fields = compareObjects(result, live, ignored);
    return {
      input: { ...id, desired: result, live },
      ...(fields.length > 0 ? { drift: { ...id, missing: false, fields } } : {}),
    };
  } catch (error) {
    const status = apiStatus(error);
    // A custom resource that sets a field its live CRD lacks is refused with a 500 (`failed to
    // create typed patch object`): not the cluster failing, and install updates the CRD first.
    if (status !== 400 && status !== 422 && !isSchemaRefusal(error))
      throw driftApiError(kube, error, p, 'patch', 'plan');
    // Refused (an immutable field): the manifest's fields as written against the live ones.
    const refused = refusal(error);
    return {
      input: { ...id, desired: p.body, live, refused },
      drift: { ...id, missing: false, fields: compareObjects(p.body, live, ignored, { onlySet: true }), refused },
    };
  }
}

/**
 * Pure. The result without the map fields the last revision set and this one does not: helm 3's
 * three-way merge deletes them, and a server-side apply by helm 4 does too, but the dry run of an
 * object helm 3 wrote keeps them (its fields belong to an Update, not to this Apply). Lists are
 * left to the dry run: their items have no stable address here.
 */
export function withoutDroppedFields(result: Obj, last: Obj | undefined, next: Obj, ignored: readonly string[]): Obj {
  if (!last) return result;
  const out = structuredClone(result);
  const walk = (before: unknown, after: unknown, at: string[]) => {
    if (!isMap(before) || !isMap(after)) return;
    for (const key of Object.keys(before)) {
      const path = [...at, key];
      if (path[0] === 'status' || ignored.some((i) => isUnder(formatPointer(path), i))) continue;
      if (!(key in after)) removeAt(out, path);
      else walk(before[key], after[key], path);
    }
  };
  walk(last, next, []);
  return out;
}

function isMap(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The chart's crds/ files (helm template --include-crds marks them by their Source line) apart from the rest. */
function splitChartCrds(rendered: string): { templates: string; crds: string } {
  const templates: string[] = [];
  const crds: string[] = [];
  for (const { piece, source } of piecesWithSource(rendered))
    (inCrdsFolder(source) ? crds : templates).push(ensureSeparator(piece.text));
  return { templates: templates.join(''), crds: crds.join('') };
}

function ensureSeparator(text: string): string {
  const body = text.endsWith('\n') ? text : `${text}\n`;
  return body.startsWith('---') ? body : `---\n${body}`;
}

function identity(p: PlacedObject): Pick<PlanObjectInput, 'apiVersion' | 'kind' | 'name' | 'namespace'> {
  return { apiVersion: p.apiVersion, kind: p.kind, name: p.name, ...(p.namespace ? { namespace: p.namespace } : {}) };
}

function annotations(p: PlacedObject): Record<string, unknown> {
  return ((p.body.metadata as Obj | undefined)?.annotations ?? {}) as Record<string, unknown>;
}

function hookOf(p: PlacedObject): string | undefined {
  const hook = annotations(p)[HOOK];
  return typeof hook === 'string' ? hook : undefined;
}

function keep(p: PlacedObject): boolean {
  return annotations(p)['helm.sh/resource-policy'] === 'keep';
}

/** Drift in manifest order (the dry runs finish in any order). */
function order(drift: ObjectDrift[], desired: PlacedObject[]): ObjectDrift[] {
  const at = new Map(desired.map((p, i) => [objectKey(p), i]));
  return drift.sort((a, b) => at.get(objectKey(a))! - at.get(objectKey(b))!);
}
