// The fields under an ignore rule keep what their owner set through every upgrade: read here, from
// the live objects of the last deployed revision, before any action changes them, and handed to
// the post-render as pins (src/post-render/pin-fields.ts), so what helm applies there is what is live.
// Read once per run, before the Lease's actions: a recovery's rollback takes them back to the
// target revision's values, and the upgrade after it puts these back.
import type { ClusterDiscovery, ResourceIndex } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { ignoredPaths, type IgnoreRule } from '../drift/ignore-rules.js';
import { getAt, parsePointer } from '../drift/json-pointer.js';
import { manifestObjects, placeObjects } from '../drift/manifest-objects.js';
import { objectClient } from '../cluster/object-client.js';
import { driftApiError, mapBounded } from '../drift/detect-drift.js';
import type { FieldPin, PinPlan } from '../post-render/pin-fields.js';
import type { ReleaseState } from './decide.js';
import { revisionManifest } from './read-state.js';
import { ignoreRules, type InstallRun } from './install-run.js';
import { type ClusterRun } from '../run/run-context.js';

const CONCURRENCY = 8;

async function readPins(
  kube: KubeClients,
  manifest: string,
  o: { release: string; releaseNamespace: string; rules: IgnoreRule[]; resources: ResourceIndex; signal?: AbortSignal },
): Promise<PinPlan> {
  const placed = placeObjects(manifestObjects(manifest), o.resources, o).filter(
    (p) => p.path && ignoredPaths(o.rules, p).length > 0,
  );
  if (placed.length === 0) return { releaseNamespace: o.releaseNamespace, objects: [] };
  const client = await objectClient(kube, o.signal);
  const objects = await mapBounded(placed, CONCURRENCY, async (p) => {
    const live = await client.get(p.path!).catch((error: unknown) => {
      throw driftApiError(kube, error, p, 'get');
    });
    if (!live) return undefined;
    // A path neither the chart nor the live object has (a rule for every kind) needs no pin.
    const fields = ignoredPaths(o.rules, p).flatMap((path): FieldPin[] => {
      const value = getAt(live, parsePointer(path));
      if (value !== undefined) return [{ path, value }];
      return getAt(p.body, parsePointer(path)) === undefined ? [] : [{ path, absent: true }];
    });
    if (fields.length === 0) return undefined;
    return {
      apiVersion: p.apiVersion,
      kind: p.kind,
      ...(p.namespace ? { namespace: p.namespace } : {}),
      name: p.name,
      fields,
    };
  });
  return { releaseNamespace: o.releaseNamespace, objects: objects.filter((x) => x !== undefined) };
}

/**
 * The live values of the fields under an ignore rule, in the objects of the last revision (a
 * pending or failed one names the objects as well as a deployed one: the values are read live).
 */
export async function ignoredFieldPins(
  run: InstallRun,
  cluster: ClusterRun,
  before: ReleaseState | undefined,
  discovery: Promise<ClusterDiscovery> | undefined,
): Promise<PinPlan | undefined> {
  const last = before?.records.at(-1);
  if (ignoreRules(run).length === 0 || !last || !discovery) return undefined;
  const manifest = await revisionManifest(cluster.kube, cluster.records, last.revision);
  const { resources } = await discovery;
  return readPins(cluster.kube, manifest, {
    release: run.release,
    releaseNamespace: cluster.namespace,
    rules: ignoreRules(run),
    resources,
    signal: run.signal,
  });
}
