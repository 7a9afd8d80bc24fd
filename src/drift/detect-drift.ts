// Drift: does the cluster still hold what the release last applied? For each object of the last
// deployed manifest, the live object (absent: drift) and a server-side apply dry run of the
// manifest's object with force, which is the live object with the release's fields put back
// (Flux's helm-controller checks the same way). Where the two differ, someone changed a field the
// release sets. Read-only: a dry run persists nothing. One GET per object, at most CONCURRENCY
// objects at a time; the dry run only for an object that does not hold exactly what the manifest
// sets, so a no-op redeploy stays fast.
import { clusterDiscovery, type ResourceIndex } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus, toInstallerApiError } from '../cluster/kube-errors.js';
import { InstallerError, PreflightError } from '../common/errors.js';
import { compareObjects, setAsWritten, type DriftedField } from './compare-objects.js';
import { refusal } from './refusal.js';
import { ignoredPaths, type IgnoreRule } from './ignore-rules.js';
import { describeObject, manifestObjects, placeObjects, type PlacedObject } from './manifest-objects.js';
import { objectClient, type ObjectClient } from '../cluster/object-client.js';

export interface ObjectDrift {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The object does not exist (or its kind is no longer served). */
  missing: boolean;
  /** The fields that differ; empty when missing. */
  fields: DriftedField[];
  /**
   * Why the API server refused the release's own apply of this object (its dry run), fields
   * named, no values: an immutable field changed (a Service's clusterIP, a StatefulSet's
   * volumeClaimTemplates; correcting fails too), or a list item edited in place that apply would
   * add a second time (a Service port; correctDrift sets it back in place first). `fields` then
   * compares the manifest's fields as written.
   */
  refused?: string;
}

export interface DriftOptions {
  releaseNamespace: string;
  /** The release name: helm puts it in every object's meta.helm.sh/release-name annotation. */
  release: string;
  rules: IgnoreRule[];
  /** The field manager of the dry runs and corrections; HELM_FIELD_MANAGER unless a test says otherwise. */
  fieldManager?: string;
  /** The run's discovery (kinds, scopes, plurals), when it has read it already. */
  resources?: ResourceIndex;
  signal?: AbortSignal;
}

// Objects checked at once (two requests each, 5-25 ms per request). On the bundled chart (12
// objects) on the 2-core machine at load 6-7: one at a time 100-265 ms, 8 or 16 at a time 43-180
// ms (noise dominates); 16 keeps a 100-object chart to a few rounds.
const CONCURRENCY = 16;

/**
 * helm's field manager, the same for helm 4 (server-side apply, operation Apply) and helm 3
 * (create and patch, operation Update), whatever its executable is called: read from the
 * managedFields of objects the pinned helm 4.1 and 3.17 installed. Correcting drift as any other
 * manager would leave that manager owning the fields, and helm's next server-side upgrade would
 * conflict with it.
 */
export const HELM_FIELD_MANAGER = 'helm';

/** The drifted objects of the manifest, in manifest order; [] when the cluster matches it. */
export async function detectDrift(kube: KubeClients, manifest: string, o: DriftOptions): Promise<ObjectDrift[]> {
  const objects = manifestObjects(manifest);
  if (objects.length === 0) return [];
  const [resources, client] = await Promise.all([
    o.resources ?? clusterDiscovery(kube.config).then((d) => d.resources),
    objectClient(kube, o.signal),
  ]);
  const placed = placeObjects(objects, resources, o);
  const results = await mapBounded(placed, CONCURRENCY, (p) => checkObject(kube, client, p, o));
  return results.filter((d) => d.missing || d.fields.length > 0);
}

async function checkObject(
  kube: KubeClients,
  client: ObjectClient,
  p: PlacedObject,
  o: DriftOptions,
): Promise<ObjectDrift> {
  const drift = {
    apiVersion: p.apiVersion,
    kind: p.kind,
    ...(p.namespace ? { namespace: p.namespace } : {}),
    name: p.name,
  };
  if (!p.path) return { ...drift, missing: true, fields: [] };
  const live = await client.get(p.path).catch((error: unknown) => {
    throw driftApiError(kube, error, p, 'get');
  });
  if (!live) return { ...drift, missing: true, fields: [] };
  const ignored = ignoredPaths(o.rules, p);
  // Most objects of an unchanged release hold exactly what the manifest sets: one read each, no
  // dry run (a 100-object no-op then costs reads only). Anything else is asked of the dry run.
  if (setAsWritten(p.body, live, ignored)) return { ...drift, missing: false, fields: [] };
  const dryRun = client.apply(p.path, p.body, { fieldManager: o.fieldManager ?? HELM_FIELD_MANAGER, dryRun: true });
  try {
    return { ...drift, missing: false, fields: compareObjects(await dryRun, live, ignored) };
  } catch (error) {
    const status = apiStatus(error);
    if (status !== 400 && status !== 422) throw driftApiError(kube, error, p, 'patch');
    // Refused (invalid): the manifest's fields as written against the live ones.
    return {
      ...drift,
      missing: false,
      fields: compareObjects(p.body, live, ignored, { onlySet: true }),
      refused: refusal(error),
    };
  }
}

/**
 * A 403 is missing RBAC: exit 6 naming the kind, namespace and verb; the caller may warn instead.
 * `purpose`: whose read it was (the drift check's, or a plan's, which needs list too).
 */
/** What a read was for, in its error: the verbs it needs and the way around differ. */
export type ApiPurpose = 'drift check' | 'plan' | 'ownership check';

export function driftApiError(
  kube: KubeClients,
  error: unknown,
  p: { kind: string; name: string; namespace?: string; apiVersion: string },
  verb: 'get' | 'patch' | 'create',
  purpose: ApiPurpose = 'drift check',
): InstallerError {
  const what = `${purpose}: ${verb} ${describeObject(p)}`;
  const status = apiStatus(error);
  if (status === 403 || status === 401) {
    const group = p.apiVersion.includes('/') ? p.apiVersion.slice(0, p.apiVersion.indexOf('/')) : 'core';
    const verbs =
      purpose === 'plan'
        ? '"list" (or "get") and "patch" (server-side dry runs persist nothing)'
        : purpose === 'ownership check'
          ? '"list" (or "get")'
          : '"get" and "patch"';
    const way = purpose === 'drift check' ? ', or run with --drift off' : '';
    return new PreflightError(
      `${what} is not allowed: the installer may not ${verb} ${p.kind} (API group ${group}) in ${p.namespace ? `namespace ${p.namespace}` : 'the cluster'}`,
      {
        hint: `Grant the installer's ServiceAccount ${verbs} on ${p.kind} (group ${group})${p.namespace ? ` in namespace ${p.namespace}` : ''} (see manifests/installer.yaml)${way}.`,
        cause: error,
      },
    );
  }
  return toInstallerApiError(error, what, kube.server);
}

/**
 * fn over items, at most `limit` at a time, results in input order; the first failure rejects,
 * and no item is started after it (a missing permission fails every request the same way).
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
