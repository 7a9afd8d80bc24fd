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
import type { ClusterDiscovery } from '../cluster/capabilities.js';
import { detectDrift, type ObjectDrift } from '../drift/detect-drift.js';
import type { IgnoreRule } from '../drift/ignore-rules.js';
import { PreflightError } from '../common/errors.js';
import type { Logger } from 'pino';
import type { DriftMode, ReleaseState } from './decide.js';
import { compareInputs, type InstallInputs } from './install-inputs.js';

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
  const last = now.at(-1);
  if (!last || last.status !== 'deployed') return { records: now };
  const drift = r.drift === 'off' ? undefined : readDrift(r, last.revision);
  drift?.catch(() => undefined);
  const inputs = await compareInputs(now, r.inputs);
  // An upgrade puts drift back whatever it is: the decision does not wait for the drift check,
  // which goes on beside the render and only names, after the upgrade, what had drifted.
  if (!inputs.equal || r.forceUpgrade) return { records: now, inputs, driftNamed: drift };
  // Readiness only matters to a run that would otherwise skip.
  const [unready, found] = await Promise.all([unreadyWorkloads(r.kube, r.records.namespace, r.records.release), drift]);
  return { records: now, inputs, unready, drift: found };
}

/** Pure: the same revisions with the same statuses (the release untouched between two reads). */
export function sameRevisions(now: RevisionLabels[], before: RevisionLabels[]): boolean {
  return now.length === before.length && now.every((r, i) => r.revision === before[i]!.revision && r.status === before[i]!.status);
}

async function readDrift(r: StateReader, revision: number): Promise<ObjectDrift[]> {
  try {
    const manifest = await revisionManifest(r.kube, r.records, revision);
    const { resources } = await r.discovery();
    return await detectDrift(r.kube, manifest, { releaseNamespace: r.records.namespace, release: r.records.release, rules: r.ignore, resources, signal: r.signal });
  } catch (error) {
    // Not allowed to read a kind: with --drift warn that is a warning, never a silent skip.
    if (!(error instanceof PreflightError) || r.drift !== 'warn') throw error;
    r.logger.warn({ cause: error.message }, 'drift not checked: the installer may not read every object of the release (--drift warn)');
    return [];
  }
}

/** The manifest helm applied for a revision, from its release Secret (as listed, or read): no helm run. */
export async function revisionManifest(kube: KubeClients, records: ReleaseRecords, revision: number): Promise<string> {
  const listed = records.payload(revision);
  if (listed) return releaseFromRecord(listed).manifest;
  const name = releaseSecretName(records.release, revision);
  const secret = await withCallTimeout(kube.core.readNamespacedSecret({ name, namespace: records.namespace })).catch((error: unknown) => {
    throw toInstallerApiError(error, `reading the release record ${records.namespace}/${name}`, kube.server);
  });
  return releaseFromRecord(secret.data?.release).manifest;
}
