// `helm-installer install` of one release, top to bottom (src/cli/commands/install-command.ts picks
// the pause, the preview or the release plan first): read what the cluster holds for the release, decide
// (decide.ts, pure), and act; an unchanged, drift-free, healthy release is left alone without a
// Lease. Anything else is checked first (render, registry, RBAC: nothing changes on bad input),
// then done under the release's Lease, where the state is read and decided again (a stuck
// release is recovered, then decided again). Failures propagate as typed errors to main.ts,
// which writes the summary and the exit code; a signal stops the run between stages, or is
// forwarded to helm.
import {
  clusterDiscovery,
  clusterRenderFlags,
  readClusterDiscovery,
  type ClusterDiscovery,
} from '../cluster/capabilities.js';
import { connectKube, helmDefaultNamespace, preloadKubeClient, type KubeClients } from '../cluster/kube-client.js';
import { ReleaseLease } from '../cluster/release-lease.js';
import { ReleaseRecords } from '../cluster/release-secrets.js';
import { TransientError, UsageError } from '../common/errors.js';
import type { RunState } from '../run/run-state.js';
import { actUnderLease } from './act.js';
import type { UnderLease } from './act-ports.js';
import { checkWithoutCluster, rbacCheck, unservedApisCheck } from './checks.js';
import { decide, type ReleaseState } from './decide.js';
import { dryRun } from './dry-run.js';
import { runInputs } from './install-inputs.js';
import type { InstallOptions } from './install-options.js';
import { withRenderSetup } from '../run/render-setup.js';
import { ignoredFieldPins } from './ignored-fields.js';
import { readReleaseState, type StateReader } from './read-state.js';
import { reportSkip } from './report.js';
import { applySettings, ignoreRules, installRun, type InstallRun } from './install-run.js';
import { chartLabel, type ClusterRun, type PlanMember, startRun } from '../run/run-context.js';

/** One release, alone (one chart) or as a `member` of a release plan (src/releases/run-graph.ts). */
export async function installRelease(o: InstallOptions, state: RunState, member?: PlanMember): Promise<number> {
  // The cluster client's module (the largest we load) loads while the chart, values and helm are
  // read (helm's own `version` runs meanwhile): every install connects.
  preloadKubeClient();
  // Every install but a dry run connects: the kubeconfig and discovery's round trips start now,
  // beside the chart, values and helm's `version`, instead of after them.
  const connecting = o.dryRun ? undefined : startConnecting();
  try {
    return await installWith(o, state, member, connecting);
  } finally {
    connecting?.stop();
  }
}

async function installWith(
  o: InstallOptions,
  state: RunState,
  member: PlanMember | undefined,
  connecting: Connecting | undefined,
): Promise<number> {
  // The chart's defaults are read only where a step needs them: an unchanged redeploy needs none.
  const run = installRun(await startRun(o, state, 1, { deferChartValues: true }), member);
  const { logger, release, resolved, helm } = run;
  logger.info(
    {
      chart: chartLabel(run),
      release,
      namespace: o.namespace,
      layers: resolved.layers,
      sets: resolved.sets.length,
      helm: helm.version,
    },
    'starting',
  );
  if (o.dryRun || !connecting) return dryRun(run);
  const inputs = runInputs(run);
  if (o.forceUpgrade) void inputs.digests();
  run.stage('connecting to the cluster');
  // Discovery (the cluster's Capabilities for the render, each kind's resource for the RBAC
  // preflight), asked since the start, overlaps the release read; given up by a skip.
  const { cluster, discovering } = await connectCluster(run, connecting.connected);
  const reader: StateReader = {
    ...cluster,
    inputs,
    drift: o.drift,
    ignore: ignoreRules(run),
    forceUpgrade: o.forceUpgrade,
    discovery: discovering.read,
    logger,
    signal: run.signal,
  };
  run.stage('reading release state');
  const before = await readBeforeLease(run, reader);
  const first = before && decide(before, o);
  // A record naming removed APIs is mapped under the Lease even when nothing else is to do.
  if (first?.kind === 'skip' && !before?.removedApis?.length) {
    discovering.stop();
    inputs.stop();
    return reportSkip(run, cluster, first, inputs.recorded());
  }
  // A cluster that did not answer the release read is not waited for by the render.
  const discovery = before ? discovering.read() : (discovering.stop(), undefined);
  discovery?.catch(() => undefined);
  helm.setRenderFlags(clusterRenderFlags(discovery, logger));
  return checkThenAct({ run, cluster, reader, inputs }, before, discovery);
}

/** The checks on one render (nothing changes on bad input), then the Lease, let go whatever happens, and the loop under it. */
async function checkThenAct(
  c: Pick<UnderLease, 'run' | 'cluster' | 'reader' | 'inputs'>,
  before: ReleaseState | undefined,
  discovery: Promise<ClusterDiscovery> | undefined,
): Promise<number> {
  const { run, cluster } = c;
  const pins = await ignoredFieldPins(run, cluster, before, discovery);
  return withRenderSetup(
    run,
    async (plan) => {
      const manifests = await checkWithoutCluster(run, plan, cluster.namespace);
      if (discovery) await unservedApisCheck(manifests, discovery);
      const rbac = rbacCheck(run, cluster, discovery);
      // Before the Lease when the cluster answered; else once the Lease has waited for it, and
      // before it creates a namespace: bad input never leaves a namespace behind.
      if (before) await rbac(manifests);
      await run.member?.gate();
      const lease = await takeLease(run, cluster, () => rbac(manifests));
      try {
        await rbac(manifests);
        if (!discovery) await unservedApisCheck(manifests, clusterDiscovery(cluster.kube.config));
        return await actUnderLease({ ...c, plan, lease, manifests }, before);
      } finally {
        await lease.release();
      }
    },
    { pins, apply: applySettings(run), runsTests: run.o.test },
  );
}

interface Connected {
  kube: KubeClients;
  /** Discovery's reads, begun as soon as the kubeconfig was loaded. */
  discovering: ReturnType<typeof readClusterDiscovery>;
}

interface Connecting {
  /** Rejects with connectKube's UsageError when the kubeconfig cannot be loaded. */
  connected: Promise<Connected>;
  /** Gives up discovery's requests: a run that ended early (bad values) never waits for a slow server. */
  stop(): void;
}

function startConnecting(): Connecting {
  const connected = connectKube().then((kube) => ({ kube, discovering: readClusterDiscovery(kube.config) }));
  connected.catch(() => undefined);
  return {
    connected,
    stop: () =>
      void connected.then(
        (c) => c.discovering.stop(),
        () => undefined,
      ),
  };
}

/** Connected clients, or (a kubeconfig that cannot be loaded) the checks that need no cluster first. */
async function connectCluster(
  run: InstallRun,
  connecting: Promise<Connected>,
): Promise<{ cluster: ClusterRun; discovering: Connected['discovering'] }> {
  const { kube, discovering } = await connecting.catch(async (error: unknown) => {
    // Bad values (3) and missing images (6) are named before a kubeconfig problem.
    if (error instanceof UsageError)
      await withRenderSetup(run, (plan) => checkWithoutCluster(run, plan, run.o.namespace), { runsTests: run.o.test });
    throw error;
  });
  const namespace = run.o.namespace ?? helmDefaultNamespace(kube.config);
  run.state.progress.namespace = namespace;
  run.state.kube = kube;
  return { cluster: { kube, namespace, records: new ReleaseRecords(kube, namespace, run.release) }, discovering };
}

/**
 * One attempt, no retry: a cluster that is not reachable yet gets the checks first (a values
 * mistake is reported as such), then the Lease retries it up to --connect-timeout.
 */
async function readBeforeLease(run: InstallRun, reader: StateReader): Promise<ReleaseState | undefined> {
  try {
    return await readReleaseState(reader);
  } catch (error) {
    if (!(error instanceof TransientError)) throw error;
    run.logger.info({ cause: error.message.split('\n')[0] }, 'cluster not reachable yet: checking the chart first');
    return undefined;
  }
}

function takeLease(
  run: InstallRun,
  cluster: ClusterRun,
  beforeCreatingNamespace: () => Promise<void>,
): Promise<ReleaseLease> {
  run.stage('waiting for the release lease');
  return ReleaseLease.acquire(cluster.kube, {
    namespace: cluster.namespace,
    release: run.release,
    waitMs: run.o.lockTimeout,
    connectMs: run.o.connectTimeout,
    signal: run.signal,
    logger: run.logger,
    beforeCreatingNamespace,
    appSlug: run.o.appSlug,
  });
}
