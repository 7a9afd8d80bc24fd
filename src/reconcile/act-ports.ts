// The real side of each action's port (actions/*.ts): the helm adapter, the cluster clients and
// the run's options, bound to this release and its Lease. The actions see only the calls their
// port names; their table tests give them fakes instead (test/reconcile/actions/).
import { clusterDiscovery, type ResourceIndex } from '../cluster/capabilities.js';
import { toInstallerApiError } from '../cluster/kube-errors.js';
import type { ReleaseLease } from '../cluster/release-lease.js';
import { readProblems } from '../cluster/read-problems.js';
import { describeProblems, type DiagnosisScope, type Problem } from '../cluster/wait-diagnosis.js';
import { watchWhileHelmWaits } from '../cluster/wait-watch.js';
import { durationMs } from '../options/config.js';
import { correctDrift } from '../drift/correct-drift.js';
import { findImmutableChanges } from '../drift/immutable-changes.js';
import { findOrphanedClaims } from '../drift/find-orphaned-claims.js';
import { objectClient } from '../cluster/object-client.js';
import { HelmOperationError } from '../common/errors.js';
import { digestLabels } from './release-digest.js';
import type { RenderSetup } from '../run/render-setup.js';
import { recordOutcome } from '../run/record.js';
import type { Narration, Stoppable } from './actions/action.js';
import { annotateReleaseRecords } from './actions/annotate-records.js';
import type { ClaimsPort } from './actions/check-claims.js';
import type { CorrectDriftPort } from './actions/correct-drift.js';
import type { MapApisPort } from './actions/map-apis.js';
import { restoreCommand, rewriteRecordManifest } from '../cluster/record-rewrite.js';
import { mapRemovedApis } from '../drift/map-removed-apis.js';
import { servedFrom } from '../drift/removed-apis.js';
import type { ApiMapping } from '../drift/map-removed-apis.js';
import type { OwnersPort } from './actions/check-owners.js';
import { readOwnedObjects } from './read-owners.js';
import type { RecoverPort } from './actions/recover.js';
import type { RemediatePort } from './actions/remediate.js';
import type { RecreatePort } from './actions/recreate-immutable.js';
import { diagnoseTests } from './actions/test-diagnosis.js';
import type { TestPort } from './actions/test-release.js';
import type { CrdsPort } from './actions/upgrade-crds.js';
import type { UpgradePort } from './actions/upgrade.js';
import type { InstallInputs } from './install-inputs.js';
import { revisionManifest, type StateReader } from './read-state.js';
import { ignoreRules, type InstallRun } from './install-run.js';
import { type ClusterRun } from '../run/run-context.js';

export interface UnderLease {
  run: InstallRun;
  cluster: ClusterRun;
  plan: RenderSetup;
  lease: ReleaseLease;
  reader: StateReader;
  inputs: InstallInputs;
  /** The chart as this run renders it: drift in an object it no longer has is not drift. */
  manifests: string;
}

/** Every action's port at once: each action reads only its own part. */
export type Ports = MapApisPort &
  RecoverPort &
  CorrectDriftPort &
  OwnersPort &
  ClaimsPort &
  CrdsPort &
  RecreatePort &
  UpgradePort &
  TestPort;

export function actionPorts(c: UnderLease): Ports {
  const { run, cluster, lease } = c;
  const either = () => AbortSignal.any([run.signal, lease.lost]);
  const shared: Narration & Stoppable & Pick<RemediatePort, 'stopped' | 'annotateRecords'> = {
    release: run.release,
    logger: run.logger,
    stage: run.stage,
    signal: run.signal,
    leaseLost: lease.lost,
    stopped: () => either().aborted,
    annotateRecords: () => annotateReleaseRecords(run, cluster),
  };
  return {
    ...shared,
    ...mapCalls(c),
    ...recoveryCalls(c, either),
    ...driftCalls(c),
    ...upgradeCalls(c, either),
    ...testCalls(c),
  };
}

/** map-apis */
function mapCalls(c: UnderLease): Own<MapApisPort> {
  const { run, cluster } = c;
  const { kube, namespace, records } = cluster;
  return {
    namespace,
    mapRecord: async (revision) => {
      // Discovery as it is now, under the Lease (the run's, or read again if that one was given up).
      const { capabilities } = await c.reader.discovery().catch(() => clusterDiscovery(kube.config));
      const served = servedFrom(capabilities.apiVersions);
      let mappings: ApiMapping[] = [];
      const { copy } = await rewriteRecordManifest(kube, { namespace, release: run.release, revision }, (manifest) => {
        const mapped = mapRemovedApis(manifest, served);
        mappings = mapped.mappings;
        return mappings.length > 0 ? mapped.manifest : undefined;
      });
      // The records' payloads as listed are the unmapped ones: list again, so what reads a
      // revision's manifest later in the run (drift correction, recreate) reads the mapped one.
      await records.current();
      return { mappings, copy };
    },
    restoreCommand: (revision) => restoreCommand(namespace, run.release, revision),
  };
}

type Own<P> = Omit<P, keyof Narration | keyof Stoppable | 'stopped' | 'annotateRecords'>;

/** recover, remediate */
function recoveryCalls({ run, cluster, lease }: UnderLease, either: () => AbortSignal): Own<RecoverPort> {
  const { o, helm, release } = run;
  const { namespace } = cluster;
  return {
    history: () => helm.history(release, namespace, undefined, either()),
    markFailed: (revision, was, description) => cluster.records.markFailed(revision, was, description),
    holder: lease.identity,
    tellRecovered: (note) =>
      void recordOutcome(run.state, {
        reason: 'Recovered',
        release,
        namespace,
        note,
        chartVersion: run.chart.version,
        started: run.started,
      }),
    rollback: (to) =>
      helm.rollback(
        { release, namespace, revision: to, timeout: o.timeout, historyMax: o.historyMax },
        { signal: either() },
      ),
    uninstall: () => helm.uninstall({ release, namespace, timeout: o.timeout }, { signal: either() }),
  };
}

/** correct drift, owners, claims, recreate */
function driftCalls(c: UnderLease): Own<CorrectDriftPort> & Own<OwnersPort> & Own<ClaimsPort> & Own<RecreatePort> {
  const { run, cluster, manifests } = c;
  const { kube, namespace, records } = cluster;
  const release = run.release;
  // The revision's manifest against this run's render, placed with the run's discovery (read again if that read was given up: the cluster was not reachable before the Lease).
  // Read once for both steps (the claims and the recreate ask about the same revision).
  const read = new Map<
    number,
    Promise<{
      previousManifest: string;
      manifests: string;
      release: string;
      releaseNamespace: string;
      resources: ResourceIndex;
    }>
  >();
  const against = (previous: number) => {
    if (!read.has(previous)) {
      read.set(
        previous,
        (async () => {
          const previousManifest = await revisionManifest(kube, records, previous);
          const { resources } = await c.reader.discovery().catch(() => clusterDiscovery(kube.config));
          return { previousManifest, manifests, release, releaseNamespace: namespace, resources };
        })(),
      );
    }
    return read.get(previous)!;
  };
  return {
    revisionManifest: (revision) => revisionManifest(kube, records, revision),
    correct: (manifest, drift) =>
      correctDrift(kube, manifest, drift, { releaseNamespace: namespace, release, rules: ignoreRules(run) }),
    orphanedClaims: run.o.orphanedClaims,
    findOrphanedClaims: async (previous, signal) =>
      findOrphanedClaims(kube, { ...(await against(previous)), signal }).catch((error: unknown) => {
        throw toInstallerApiError(
          error,
          "reading the claims of the release's StatefulSets (list persistentvolumeclaims)",
          kube.server,
        );
      }),
    releaseNamespace: namespace,
    liveObjects: async (signal) => {
      const { resources } = await c.reader.discovery().catch(() => clusterDiscovery(kube.config));
      return readOwnedObjects(kube, { manifests, resources, release, releaseNamespace: namespace, signal });
    },
    recreateImmutable: run.o.recreateImmutable,
    immutableChanges: async (previous, signal) => findImmutableChanges(kube, { ...(await against(previous)), signal }),
    objects: (signal) => objectClient(kube, signal),
    timeoutMs: durationMs(run.o.timeout),
    apiError: (error, doing) => toInstallerApiError(error, doing, kube.server),
  };
}

/** CRDs, install, upgrade */
function upgradeCalls(c: UnderLease, either: () => AbortSignal): Own<CrdsPort> & Own<UpgradePort> {
  const { run, cluster, manifests, plan } = c;
  const { o, helm, release, logger } = run;
  const { kube, namespace } = cluster;
  const scope: DiagnosisScope = { kube, namespace, release, since: run.started };
  return {
    manifests,
    upgradeCrds: async () => {
      const { upgradeCrds } = await import('../crds/upgrade-crds.js');
      return upgradeCrds({
        kube,
        manifests,
        policy: o.crds,
        release: { name: release, namespace },
        skipPreflight: o.skipPreflight,
        logger,
        signal: either(),
      });
    },
    takeOwnership: o.takeOwnership,
    failFastAfter: o.failFastAfter,
    labels: async () => ({ ...digestLabels(await c.inputs.digests()), ...run.member?.labels }),
    upgradeInstall: (r, signal) =>
      helm.upgradeInstall(
        { ...plan.upgradeArguments(namespace), ...r, dryRun: false },
        { signal, env: plan.airgap.env },
      ),
    watch: (w) =>
      watchWhileHelmWaits(scope, {
        intervalMs: o.progressInterval,
        failFastMs: w.failFastMs,
        logger,
        onHopeless: w.onHopeless,
      }),
    withCauses: (error, lastSeen) => withCauses(error, scope, lastSeen),
  };
}

/** test */
function testCalls({ run, cluster }: UnderLease): Own<TestPort> {
  const { o, helm, release } = run;
  return {
    testTimeout: o.testTimeout,
    test: (signal) => helm.test({ release, namespace: cluster.namespace, timeout: o.testTimeout }, { signal }),
    diagnose: (runs) => diagnoseTests(run, cluster, runs),
  };
}

async function withCauses(
  err: HelmOperationError,
  scope: DiagnosisScope,
  lastSeen: Problem[],
): Promise<HelmOperationError> {
  const now = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
  const problems = now.length > 0 ? now : lastSeen;
  if (problems.length === 0) return err;
  const [first = '', ...rest] = err.message.split('\n');
  return new HelmOperationError(
    [first, 'not ready:', ...describeProblems(problems).map((l) => `  ${l}`), ...rest].join('\n'),
    { hint: err.hint, cause: err },
  );
}
