// Read: what the cluster holds for the release, all that `decide` needs and nothing more. The
// release records (labels of helm's release Secrets, one list call); when the last revision is
// deployed, the inputs compared with it, and at the same time the drift of its objects and the
// readiness of its workloads. Read-only: no Lease is needed, so an unchanged redeploy never
// writes anything.
import type { KubeClients } from '../cluster/kube-client.js';
import { releaseSecretName, type ReleaseRecords, type RevisionLabels } from '../cluster/release-secrets.js';
import { releaseFromRecord } from '../drift/release-manifest.js';
import { toInstallerApiError, withCallTimeout } from '../cluster/kube-errors.js';
import { unreadyWorkloads } from '../cluster/workload-health.js';
import { clusterDiscovery, type ClusterDiscovery } from '../cluster/capabilities.js';
import { mapRemovedApis, mentionsRemovable } from '../drift/map-removed-apis.js';
import { servedFrom, type Served } from '../drift/removed-apis.js';
import { detectDrift, type ObjectDrift } from '../drift/detect-drift.js';
import type { IgnoreRule } from '../drift/ignore-rules.js';
import { PreflightError, TransientError } from '../common/errors.js';
import type { Logger } from 'pino';
import type { DriftMode, ReleaseState, RecordApis } from './decide.js';
import { compareInputs, type InstallInputs } from './install-inputs.js';
import { bridgedCrds, CRDS_BRIDGED_RELEASE_LABEL, unfinishedCrd } from '../crds/read-bridged.js';

export interface StateReader {
  kube: KubeClients;
  records: ReleaseRecords;
  inputs: InstallInputs;
  drift: DriftMode;
  ignore: IgnoreRule[];
  forceUpgrade: boolean;
  /** The run's discovery (each kind's resource and scope), read once and shared. */
  discovery: () => Promise<ClusterDiscovery>;
  logger: Logger;
  signal: AbortSignal;
}

/** Reads the state; `records` when the caller has just read them. */
export async function readReleaseState(r: StateReader, records?: RevisionLabels[]): Promise<ReleaseState> {
  const now = records ?? (await r.records.current());
  // Beside the rest: it waits for discovery only when a record names a version of the table.
  const removing = readRemovedApis(r, now);
  removing.catch(() => undefined);
  // Found: the loop maps them first (decide.ts); the rest of the state is read as the record will be.
  const mapped = (removed: { found: RecordApis[] }) => (removed.found.length > 0 ? { removedApis: removed.found } : {});
  const last = now.at(-1);
  if (!last || last.status !== 'deployed') return { records: now, ...mapped(await removing) };
  const drift = r.drift === 'off' ? undefined : removing.then((removed) => readDrift(r, last.revision, removed.served));
  drift?.catch(() => undefined);
  const [removed, inputs] = await Promise.all([removing, compareInputs(now, r.inputs)]);
  // An upgrade puts drift back whatever it is: the decision does not wait for the drift check,
  // which goes on beside the render and only names, after the upgrade, what had drifted.
  if (!inputs.equal || r.forceUpgrade) return { records: now, inputs, driftNamed: drift, ...mapped(removed) };
  // Readiness only matters to a run that would otherwise skip; so do CRDs a killed run left
  // mid-migration, asked only after a revision whose upgrade bridged them.
  const [unready, bridged, found] = await Promise.all([
    unreadyWorkloads(r.kube, r.records.namespace, r.records.release),
    last.labels[CRDS_BRIDGED_RELEASE_LABEL] ? bridgedCrds(r.kube, r.records.release, r.signal) : [],
    drift,
  ]);
  return {
    records: now,
    inputs,
    unready: [...unready, ...bridged.map(unfinishedCrd)],
    drift: found,
    ...mapped(removed),
  };
}

/**
 * The records helm builds before it acts that name an apiVersion the cluster no longer serves:
 * the last revision and the last deployed one (an upgrade's current release), and with none
 * deployed, the newest superseded one (a recovery's or remediation's rollback target). Discovery
 * is waited for only when a record names a version of the removals table at all (a beta one):
 * most never do.
 */
export async function readRemovedApis(
  r: StateReader,
  now: RevisionLabels[],
): Promise<{ found: RecordApis[]; served?: Served }> {
  const manifests = (
    await Promise.all(
      builtRevisions(now).map(async (revision) => ({
        revision,
        manifest: await revisionManifest(r.kube, r.records, revision).catch(() => undefined),
      })),
    )
  ).filter((m): m is { revision: number; manifest: string } => m.manifest !== undefined);
  const candidates = manifests.filter((m) => mentionsRemovable(m.manifest));
  if (candidates.length === 0) return { found: [] };
  const served = servedFrom((await servedApis(r)).capabilities.apiVersions);
  const found = candidates
    .map((m) => ({ revision: m.revision, mappings: mapRemovedApis(m.manifest, served).mappings }))
    .filter((m) => m.mappings.length > 0);
  return { found, served };
}

/** Pure: the revisions helm builds next, from the non-superseded records (superseded ones are the numbers missing below the last). */
export function builtRevisions(now: RevisionLabels[]): number[] {
  const last = now.at(-1);
  if (!last) return [];
  const deployed = now.findLast((x) => x.status === 'deployed');
  const listed = new Set(now.map((x) => x.revision));
  let superseded: number | undefined;
  if (!deployed)
    for (let n = last.revision - 1; n >= 1 && superseded === undefined; n--) if (!listed.has(n)) superseded = n;
  return [...new Set([deployed?.revision, superseded, last.revision])]
    .filter((x): x is number => x !== undefined)
    .sort((a, b) => a - b);
}

/** The run's discovery; read again if that read was given up (the cluster was not reachable before the Lease). */
async function servedApis(r: StateReader): Promise<ClusterDiscovery> {
  return r.discovery().catch(() =>
    clusterDiscovery(r.kube.config).catch((error: unknown) => {
      throw new TransientError(
        `cannot read which APIs the cluster serves: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        { hint: 'Run the installer again once the cluster answers.' },
      );
    }),
  );
}

/** Pure: the same revisions with the same statuses (the release untouched between two reads). */
export function sameRevisions(now: RevisionLabels[], before: RevisionLabels[]): boolean {
  return (
    now.length === before.length &&
    now.every((r, i) => r.revision === before[i]!.revision && r.status === before[i]!.status)
  );
}

async function readDrift(r: StateReader, revision: number, served: Served | undefined): Promise<ObjectDrift[]> {
  try {
    const stored = await revisionManifest(r.kube, r.records, revision);
    // A record naming removed APIs is compared as the loop's first step will have mapped it.
    const manifest = served ? mapRemovedApis(stored, served).manifest : stored;
    const { resources } = await r.discovery();
    return await detectDrift(r.kube, manifest, {
      releaseNamespace: r.records.namespace,
      release: r.records.release,
      rules: r.ignore,
      resources,
      signal: r.signal,
    });
  } catch (error) {
    // Not allowed to read a kind: with --drift warn that is a warning, never a silent skip.
    if (!(error instanceof PreflightError) || r.drift !== 'warn') throw error;
    r.logger.warn(
      { cause: error.message },
      'drift not checked: the installer may not read every object of the release (--drift warn)',
    );
    return [];
  }
}

/** The manifest helm applied for a revision, from its release Secret (as listed, or read): no helm run. */
export async function revisionManifest(kube: KubeClients, records: ReleaseRecords, revision: number): Promise<string> {
  const listed = records.payload(revision);
  if (listed) return releaseFromRecord(listed).manifest;
  const name = releaseSecretName(records.release, revision);
  const secret = await withCallTimeout(kube.core.readNamespacedSecret({ name, namespace: records.namespace })).catch(
    (error: unknown) => {
      throw toInstallerApiError(error, `reading the release record ${records.namespace}/${name}`, kube.server);
    },
  );
  return releaseFromRecord(secret.data?.release).manifest;
}
