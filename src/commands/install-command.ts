// `helm-installer install`: the orchestrator. It only chains the stages: chart -> values ->
// release state and digests (an unchanged, healthy release is left alone) -> render check
// (templates and schema, before the cluster is touched) -> image preflight -> the release
// Lease (one installer at a time) -> recovery of a release a killed helm left pending ->
// helm upgrade --install -> report. Failures propagate as typed errors to main.ts, which writes
// the summary and the exit code. A signal stops the run between stages, or is forwarded to helm.
import { readFileSync, writeSync } from 'node:fs';
import { clusterRenderFlags, readClusterDiscovery, type ClusterDiscovery } from '../cluster/capabilities.js';
import { checkInstallHelmArgs } from '../helm/render-flags.js';
import { connectKube, helmDefaultNamespace } from '../cluster/kube-client.js';
import { ReleaseLease } from '../cluster/release-lease.js';
import { ReleaseRecords, type RevisionLabels } from '../cluster/release-secrets.js';
import { describeProblems, readProblems, watchWhileHelmWaits, type DiagnosisScope, type Problem } from '../cluster/wait-diagnosis.js';
import { unreadyWorkloads } from '../cluster/workload-health.js';
import { defineCommand } from '../command.js';
import {
  type CommonOptions,
  commonOptionTable,
  parseDurationMs,
  parseHistoryMax,
  parsePath,
  parseTakeOwnership,
  parseTimeout,
  toCommonOptions,
} from '../config.js';
import { parseCaFile, parsePullSecretFile } from '../input-file-options.js';
import { type OptionsOf, rest, switchOption, value } from '../options.js';
import { HelmOperationError, type InstallerError, ReleaseBusyError, TransientError, UsageError } from '../errors.js';
import type { HelmClient } from '../helm/helm-client.js';
import { isPending, type HistoryEntry } from '../helm/helm-results.js';
import { awaitInOrder } from '../overlap.js';
import {
  chartDigest, decideNoOp, digestLabels, inputDigest, sameInputs, valuesDigest, writtenValuesDigest, type ApplySettings, type InputDigests, type ReleaseDigests,
} from '../release-digest.js';
import { valuesAsWritten } from '../values-as-written.js';
import { planRecovery, recoverRelease } from '../release-recovery.js';
import { keepsValuesThroughPostRender } from '../helm/post-render-roundtrip.js';
import { openRenderGate } from '../render-gate.js';
import { successSummary } from '../report.js';
import { withTempDir } from '../temp-dir.js';
import type { RunState } from '../run-state.js';
import { toValuesArguments, type ResolvedValues } from '../values.js';
import { installerVersion } from '../version.js';
import { startCommand, withAirgap, type AirgapSetup, type CommandStart } from './prepare.js';
import { describeOccurrence } from '../images/image-plan.js';
import type { ValuesArguments } from '../helm/helm-args.js';
import type { RbacQueries } from '../rbac/rbac-preflight.js';

export const installOptionTable = {
  ...commonOptionTable,
  timeout: value('--timeout <duration>', 'TIMEOUT', 'how long helm waits for resources (Go duration)', parseTimeout, '10m'),
  historyMax: value('--history-max <n>', 'HISTORY_MAX', 'revisions helm keeps (0 = all)', parseHistoryMax, 5),
  dryRun: switchOption('--dry-run', 'DRY_RUN', "helm's server-side dry run: nothing changes"),
  terminationLog: value('--termination-log <path>', 'TERMINATION_LOG', 'where the failure summary is written', parsePath, '/dev/termination-log'),
  takeOwnership: value(
    '--take-ownership <when>',
    'TAKE_OWNERSHIP',
    'adopt existing objects without helm annotations: first-install, always, never',
    parseTakeOwnership,
    'first-install',
  ),
  skipPreflight: switchOption('--skip-preflight', 'SKIP_PREFLIGHT', 'skip the preflight checks: rewritten images in the registry, RBAC'),
  registryCaFile: value('--registry-ca-file <file>', 'REGISTRY_CA_FILE', 'CA bundle for an HTTPS registry with a private CA', parseCaFile),
  pullSecretFile: value('--pull-secret-file <file>', 'PULL_SECRET_FILE', 'a .dockerconfigjson file with the registry credentials for the preflight', parsePullSecretFile),
  lockTimeout: value('--lock-timeout <duration>', 'LOCK_TIMEOUT', 'how long to wait while another installer holds the release (its Lease), then exit 7', parseDurationMs, 300_000, '5m'),
  connectTimeout: value('--connect-timeout <duration>', 'CONNECT_TIMEOUT', 'how long to retry an API server that is not reachable yet, then exit 5', parseDurationMs, 60_000, '60s'),
  forceUpgrade: switchOption('--force-upgrade', 'FORCE_UPGRADE', 'upgrade even when chart and values equal the deployed revision'),
  progressInterval: value('--progress-interval <duration>', 'PROGRESS_INTERVAL', 'while helm waits, how often to log what is not ready and why', parseDurationMs, 30_000, '30s'),
  failFastAfter: value(
    '--fail-fast-after <duration>',
    'FAIL_FAST_AFTER',
    'stop (helm rolls back) when a pod stays in ErrImagePull/ImagePullBackOff/CrashLoopBackOff this long; 0 = wait the whole timeout',
    parseDurationMs,
    90_000,
    '90s',
  ),
  helmArgs: rest('HELM_ARGS', 'after --: passed to helm verbatim'),
};

export type InstallOptions = CommonOptions & Omit<OptionsOf<typeof installOptionTable>, keyof typeof commonOptionTable>;

export const installDefinition = defineCommand({
  name: 'install',
  description: 'helm upgrade --install the chart with --wait, rolling back on failure',
  options: installOptionTable,
  run: (o, state) => {
    const problem = checkInstallHelmArgs(o.helmArgs, o.registry !== undefined || o.imagePullSecret !== undefined);
    if (problem) throw new UsageError(problem, { hint: 'Remove it from the arguments after -- (or from HELM_INSTALLER_HELM_ARGS).' });
    return installCommand({ ...o, ...toCommonOptions(o) }, state);
  },
});

export async function installCommand(o: InstallOptions, state: RunState): Promise<number> {
  const started = Date.now();
  // The chart's defaults are read past the no-op check (withAirgap): an unchanged redeploy needs none.
  const start = await startCommand(o, state, 1, { deferChartValues: true });
  const { logger, chart, release, resolved, helm } = start;
  logger.info(
    { chart: `${chart.name}-${chart.version}`, release, namespace: o.namespace, layers: resolved.layers, sets: resolved.sets.length, helm: helm.version },
    'starting',
  );
  const stage = stageGate(state);
  if (o.dryRun) return dryRun(o, state, start, started);

  // The values digest: the layers as written, or (when that reading does not apply) one helm run,
  // helm's own merge of the values. Either is computed only when the run needs it: an unchanged
  // redeploy whose inputs as given equal the deployed revision's never does, and a probe running
  // beside it made that redeploy about 20 ms slower (its CPU while this thread loads the
  // Kubernetes client and the API server answers); a no-op stops a probe still running. Asked as
  // soon as the release read shows a comparison or an upgrade ahead (--force-upgrade: at once).
  // Each values file read once, for both digests (the values were read and bounded before).
  const layers = resolved.layers.map((l) => ({ source: l.source, content: readFileSync(l.file) }));
  const known = inputDigests(o, chart.path, layers, resolved);
  let digestsPromise: Promise<ReleaseDigests> | undefined;
  let digestsKnown: ReleaseDigests | undefined;
  const probeStop = new AbortController();
  const digests = (): Promise<ReleaseDigests> => {
    if (!digestsPromise) {
      digestsPromise = releaseDigests(o, known, layers, helm, resolved, AbortSignal.any([state.signal, probeStop.signal]));
      digestsPromise.then((d) => (digestsKnown = d), () => undefined);
    }
    return digestsPromise;
  };
  if (o.forceUpgrade) void digests();
  stage('connecting to the cluster');
  const kube = await connectKube().catch(async (err: unknown) => {
    // A kubeconfig that cannot be loaded is reported after the checks that need no cluster, so
    // bad values (3) and missing images (6) are named first, as for a cluster not reachable yet.
    if (err instanceof UsageError) await checksWithoutCluster(o, state, start);
    throw err;
  });
  const namespace = o.namespace ?? helmDefaultNamespace(kube.config);
  state.progress.namespace = namespace;
  const records = new ReleaseRecords(kube, namespace, release);
  // Discovery (the cluster's Capabilities for the renders, each kind's resource for the RBAC
  // preflight) is asked now, so its round trips overlap the release read below instead of
  // following it; its answers are parsed only past the no-op check, which needs none of them
  // (an unchanged redeploy, or a run that could not read the release, gives them up: stop()).
  const discovering = readClusterDiscovery(kube.config);
  let lease: ReleaseLease | undefined;
  let leasing: Promise<ReleaseLease> | undefined;
  let recordsUnderLease: Promise<RevisionLabels[]> | undefined;
  // One acquisition per run: a second call (the sequential path after the gated one) joins it.
  const acquire = async (beforeCreatingNamespace?: () => Promise<void>, signal = state.signal, onWaiting?: () => void) => {
    stage('waiting for the release lease');
    leasing ??= ReleaseLease.acquire(kube, {
      namespace,
      release,
      waitMs: o.lockTimeout,
      connectMs: o.connectTimeout,
      signal,
      logger,
      beforeCreatingNamespace,
      onWaiting,
    });
    lease = await leasing;
    // The release records as they are under the Lease (no other installer changes them from now
    // on), read at once: the render and the RBAC preflight often still run, and the upgrade would
    // otherwise wait for this round trip after them. Awaited (and its failure reported) only at
    // "reading release history".
    recordsUnderLease ??= records.current();
    recordsUnderLease.catch(() => undefined);
    return lease;
  };

  try {
    stage('reading release state');
    // One attempt, no retry: a cluster that is not reachable yet gets the render check first (a
    // values mistake is reported as such), then the Lease retries it up to --connect-timeout.
    const current = await records.current().catch((err: unknown) => {
      if (!(err instanceof TransientError)) throw err;
      logger.info({ cause: err.message.split('\n')[0] }, 'cluster not reachable yet: checking the chart first');
      return undefined;
    });

    const unchanged = (revision: number, recorded: Partial<ReleaseDigests>): number => {
      discovering.stop();
      probeStop.abort();
      logger.info({ release, namespace, revision, ...recorded }, `unchanged: chart and values equal revision ${revision}, which is deployed and healthy; no upgrade`);
      writeSync(2, `${successSummary({ release, namespace, action: 'unchanged', revision, chart: `${chart.name}-${chart.version}`, seconds: (Date.now() - started) / 1000 })}\n`);
      return 0;
    };

    // Unchanged and healthy: nothing to do. Decided on the inputs as given when they equal the
    // deployed revision's (no helm run: the values probe is never started), else on helm's merge of them.
    const unchangedRevision = async (revisions: RevisionLabels[]): Promise<number | undefined> => {
      const same = sameInputs(revisions, known);
      // No deployed last revision (a first install, a failed one): an upgrade whatever the values,
      // decided without waiting for helm's merge of them (the render goes on meanwhile). Equal
      // inputs as given need no merge either: that is the no-op's short way.
      const compared = async () => (revisions.at(-1)?.status === 'deployed' ? await digests() : { chart: known.chart, values: '' });
      const decision = same ? { unchanged: true as const, ...same } : decideNoOp(revisions, await compared());
      const unready = decision.unchanged ? await unreadyWorkloads(kube, namespace, release) : [];
      if (decision.unchanged && unready.length === 0) return decision.revision;
      logger.info({ release, reason: decision.unchanged ? `not healthy: ${unready.join('; ')}` : decision.reason }, 'upgrading');
      return undefined;
    };
    const noOpDigests = async (): Promise<Partial<ReleaseDigests>> => digestsKnown ?? known;

    if (o.forceUpgrade) {
      logger.info({ release }, 'upgrading: --force-upgrade');
    } else if (current) {
      // Read only, no Lease: the release record and the live workloads are all a no-op needs.
      // Another installer that holds the Lease has either not written its revision yet (then this
      // run's request is what is deployed at this moment, as if it had finished just before) or
      // has (then the last revision is pending, not deployed, and this run waits for the Lease).
      const revision = await unchangedRevision(current);
      if (revision !== undefined) return unchanged(revision, await noOpDigests());
    }
    // Past the no-op: the upgrade's labels need the digests.
    void digests();
    // Every render from here on (image plan, hints, render check, RBAC) sees the
    // cluster's version and APIs, as helm upgrade will (the first helm template waits for them),
    // and the RBAC preflight each kind's resource and scope, from the discovery asked above. For a
    // cluster that did not answer the release read, its answers are not waited for.
    if (current === undefined) discovering.stop();
    const discovery: Promise<ClusterDiscovery> | undefined = current === undefined ? undefined : discovering.read();
    discovery?.catch(() => undefined);
    helm.setRenderFlags(clusterRenderFlags(discovery, logger));
    return await withAirgap(o, { chart, helm, release, logger }, toValuesArguments(resolved), async (airgap) => {
      const values = toValuesArguments(resolved, airgap.generated.map((g) => g.file));
      const render = () => renderCheck(start, airgap, values, namespace, state.signal);
      // The release namespace's rules review needs no render, nor the access reviews of the CRD
      // verbs when the chart ships CRDs: asked as soon as the cluster answered, while helm renders.
      let queries: Promise<RbacQueries> | undefined;
      const rbacQueries = () =>
        (queries ??= Promise.all([import('../rbac/rbac-preflight.js'), import('../rbac/chart-crds.js')]).then(([m, { crdAccessGuess }]) => {
          const q = m.RbacQueries.of(kube.config, discovery?.then((d) => d.resources));
          void q.review(namespace);
          q.prefetchAccess(crdAccessGuess(chart.path));
          return q;
        }));
      // The chart's values.yaml files (deferred at start for the no-op check), where the run needs
      // them (the image hints) or has no render check to fail first (--skip-preflight, a cluster
      // not reachable yet): parsed on this thread once helm renders on the other core; a bad one is
      // still exit 3 naming the file, reported before the render check and before any namespace
      // is created. Parsed on the next turn of
      // the event loop: the render started just before spawns helm only after a few microtasks
      // (it awaits the render flags), and a parse in this tick would hold that spawn back.
      const chartDefaults = (): Promise<void> =>
        new Promise((resolve, reject) =>
          setImmediate(() => {
            try {
              void chart.defaultValues;
              resolve();
            } catch (error) {
              reject(error);
            }
          }),
        );
      const rbacCheck = async (manifests: string) => {
        const [{ rbacPreflight }, q] = await Promise.all([import('../rbac/rbac-preflight.js'), rbacQueries()]);
        await rbacPreflight({ manifests, releaseNamespace: namespace }, logger, kube.config, q);
      };

      /** helm upgrade --install, watched while it waits; its failure mapped to its cause. */
      const runUpgrade = async (p: {
        everDeployed: boolean;
        revisions: number;
        labels: Record<string, string>;
        /** The run's Lease (still being taken when the gate holds helm). */
        lease: Promise<ReleaseLease>;
        postRendererArgs: string[];
        env: Record<string, string>;
        /** Why the render gate stopped helm, when it did (see render-gate.ts). */
        stoppedBy?: () => InstallerError | 'restart' | undefined;
      }): Promise<number> => {
        const takeOwnership = o.takeOwnership === 'always' || (o.takeOwnership === 'first-install' && !p.everDeployed);
        stage(p.everDeployed ? 'upgrade' : 'install');
        const action = state.progress.action;
        logger.info({ release, action, takeOwnership, revisions: p.revisions }, 'running helm upgrade --install');
        // Stop helm if another installer takes the Lease (this run stalled past its duration).
        let held: ReleaseLease | undefined;
        const lost = new AbortController();
        p.lease.then(
          (l) => {
            held = l;
            if (l.lost.aborted) lost.abort();
            else l.lost.addEventListener('abort', () => lost.abort(), { once: true });
          },
          () => undefined,
        );
        // While helm waits: progress at intervals, and a stop when a pod cannot become ready.
        const failFast = new AbortController();
        const scope = { kube, namespace, release, since: started };
        const watch = watchWhileHelmWaits(scope, {
          intervalMs: o.progressInterval,
          failFastMs: o.failFastAfter > 0 ? o.failFastAfter : Number.POSITIVE_INFINITY,
          logger,
          onHopeless: () => failFast.abort(),
        });
        let revision: number | undefined;
        try {
          ({ revision } = await helm.upgradeInstall(
            {
              release,
              chart: chart.path,
              namespace,
              values,
              timeout: o.timeout,
              historyMax: o.historyMax,
              dryRun: false,
              takeOwnership,
              postRendererArgs: p.postRendererArgs,
              extraArgs: o.helmArgs,
              labels: p.labels,
            },
            { signal: AbortSignal.any([state.signal, lost.signal, failFast.signal]), env: p.env },
          ));
        } catch (err) {
          const stopped = p.stoppedBy?.();
          if (stopped === 'restart') throw new RestartRun();
          if (stopped) throw stopped;
          if (held?.lost.aborted) throw held.lost.reason;
          if (watch.failedFast) throw failedFastError(release, action, watch.failedFast, o.failFastAfter);
          if (err instanceof HelmOperationError) throw await withCauses(err, scope, watch.lastSeen);
          throw err;
        } finally {
          watch.stop();
        }

        logger.info({ release, revision }, 'done');
        writeSync(
          2,
          `${successSummary({ release, namespace, action: p.everDeployed ? 'upgraded' : 'installed', revision, chart: `${chart.name}-${chart.version}`, seconds: (Date.now() - started) / 1000 })}\n`,
        );
        return 0;
      };

      // Helm 4 and a release that is new or deployed, the cluster reachable, nothing to rewrite:
      // no render of our own. Helm upgrade starts as soon as the labels are known and renders
      // the chart once; the RBAC preflight runs on that very render at its post-render, before
      // helm writes anything, while the Lease is taken (render-gate.ts). Not for the first install
      // of a chart that ships crds/: helm applies those before it renders, so bad values must be
      // found by a render first (an upgrade never touches crds/, and needs no CRD verbs); not for
      // helm 3, whose post-renderer never sees the hooks.
      let checkedByGate = false;
      const lastRead = current?.at(-1);
      if (
        helm.major === 4 &&
        !o.skipPreflight &&
        airgap.postRendererArgs.length === 0 &&
        current !== undefined &&
        (lastRead === undefined || lastRead.status === 'deployed') &&
        (lastRead !== undefined || (await import('../rbac/chart-crds.js')).shipsNoCrds(chart.path))
      ) {
        const revisions = current;
        const gated = await withTempDir('helm-installer-gate', async (workDir) => {
          void rbacQueries().catch(() => undefined);
          let taking: Promise<ReleaseLease> | undefined;
          const gate = await openRenderGate({
            workDir,
            check: async (manifests) => {
              state.progress.action = 'rbac preflight';
              await rbacCheck(manifests);
              state.progress.action = revisions.length > 0 ? 'upgrade' : 'install';
            },
            // Under the Lease, the release must be as it was read: helm read it too, before its
            // render. Another installer's revision meanwhile: the run starts over without this helm.
            proceed: async () => {
              await taking;
              const same = sameRevisions(await recordsUnderLease!, revisions);
              // A SIGTERM while helm waited here: it is stopped before it changes anything.
              if (state.signal.aborted) throw interrupted('install (at helm\'s post-render)');
              return same;
            },
            keepsValues: keepsValuesThroughPostRender(helm.version),
          });
          try {
            const labels = digestLabels(await digests());
            // Taken beside helm's start; a namespace this run must create waits for the checks.
            taking = acquire(() => gate.checked, state.signal, () => gate.restart());
            taking.catch(() => undefined);
            return await runUpgrade({
              everDeployed: revisions.length > 0,
              revisions: revisions.length,
              labels,
              lease: taking,
              postRendererArgs: gate.helmArgs,
              env: gate.env,
              stoppedBy: gate.stoppedBy,
            }).catch((error: unknown) => {
              gate.helmEnded(error);
              if (error instanceof RestartRun || gate.stoppedBy()) throw error;
              // Helm stopped before its post-render: a render failure. A bad values.yaml of the
              // chart is named (file and line, exit 3) instead of helm's message.
              void chart.defaultValues;
              throw error;
            });
          } catch (error) {
            if (error instanceof RestartRun) return { reason: gate.restartReason(), checked: gate.passed() };
            throw error;
          } finally {
            gate.dispose();
          }
        });
        if (typeof gated === 'number') return gated;
        // The checks passed on helm's render of these very values: not asked again.
        checkedByGate = gated.checked;
        logger.info({ release, reason: gated.reason }, `helm stopped at its post-render before any change: starting over${checkedByGate ? ' without it' : ', the chart rendered first'}`);
      }

      let held: ReleaseLease;
      // A cluster not reachable yet: the checks first (a values mistake is reported as such).
      if (airgap.postRendererArgs.length > 0 || current === undefined) {
        // The render check and the registry preflight do not depend on each other: both at once,
        // a failure still reported in stage order (bad input before a missing image).
        stage('render check');
        const rendered = render();
        const defaults = chartDefaults();
        await awaitInOrder(state.progress, [
          ['reading the chart values', defaults],
          ['render check', rendered],
          [
            'registry preflight',
            airgap.preflight && !o.skipPreflight
              ? untilAborted(airgap.preflight(logger, { pullSecretFile: o.pullSecretFile, caFile: o.registryCaFile, secrets: state.secrets }), state.signal, 'registry preflight')
              : Promise.resolve(),
          ],
        ] as const);
        warnUnrewrittenHooks(o, start, airgap);
        held = await acquire();
        if (!o.skipPreflight) {
          // Once the Lease has waited for the cluster to answer.
          stage('rbac preflight');
          await untilAborted(rbacCheck(await rendered), state.signal, 'rbac preflight');
        }
      } else if (!o.skipPreflight && !checkedByGate) {
        // The cluster answered: the render and the RBAC preflight (access reviews: read only) run
        // while the Lease is taken, a failure reported in stage order. Only a namespace this run
        // must create for the Lease waits for both, so bad input leaves the cluster untouched.
        void rbacQueries().catch(() => undefined);
        // Nothing is rewritten, so nothing needs the chart's defaults here: helm reads its
        // values.yaml files itself. They are parsed only when the render fails, to name a bad one
        // (file and line, exit 3) instead of helm's message: parsing them on this thread cost
        // every install 25-35 ms before helm could start (the bundled chart and its subcharts).
        const rendered = render().catch((error: unknown) => {
          void chart.defaultValues;
          throw error;
        });
        const checked = rendered.then((m) => rbacCheck(m));
        checked.catch(() => undefined);
        const stopWaiting = new AbortController();
        const taking = acquire(() => checked, AbortSignal.any([state.signal, stopWaiting.signal]));
        taking.catch(() => undefined);
        try {
          await awaitInOrder(state.progress, [
            ['render check', rendered],
            ['rbac preflight', untilAborted(checked, state.signal, 'rbac preflight')],
          ] as const);
        } catch (error) {
          // Not waiting on for another installer; a Lease already taken is released (finally).
          stopWaiting.abort();
          await taking.catch(() => undefined);
          throw error;
        }
        state.progress.action = 'waiting for the release lease';
        held = await taking;
      } else {
        // No preflight (or it passed on helm's render at the gate, which stopped helm so that the
        // run starts over without it): helm's own upgrade renders first and stops on bad values
        // before it changes anything, so a separate render would only cost its time. A namespace
        // this run must create for the Lease still waits for a render check first.
        await chartDefaults();
        warnUnrewrittenHooks(o, start, airgap);
        let checked: Promise<void> | undefined;
        held = await acquire(
          () =>
            (checked ??= (async () => {
              stage('render check');
              await render();
              stage('waiting for the release lease');
            })()),
        );
      }
      const signal = AbortSignal.any([state.signal, held.lost]);
      stage('reading release history');
      // Under the Lease: the records again (a cheap list of labels, asked when the Lease was
      // taken). Helm's history is read only when they show something unusual (a pending or failed
      // last revision) that the recovery plan must see; a release that does not exist or whose
      // last revision is deployed needs none.
      const now = await (recordsUnderLease ?? records.current());
      const last = now.at(-1);
      let history: { revision: number; status: string }[] = now;
      if (last && last.status !== 'deployed') {
        const full = await helm.history(release, namespace, undefined, signal);
        history = full;
        const plan = planRecovery(full);
        if (plan.kind !== 'none') {
          stage(`recovering the release (${plan.pending.status})`);
          const { released } = await recoverRelease(plan, {
            release,
            namespace,
            records,
            helm,
            logger,
            timeout: o.timeout,
            historyMax: o.historyMax,
            signal,
            holder: held.identity,
          });
          if (!released && !o.forceUpgrade) {
            // The rollback may have brought back exactly what this run asks for.
            const revision = await unchangedRevision(await records.current());
            if (revision !== undefined) return unchanged(revision, await noOpDigests());
          }
          history = released ? [] : await helm.history(release, namespace, undefined, signal);
        }
      }
      const everDeployed = history.some((h) => h.status === 'deployed' || h.status === 'superseded');
      // Awaited only now: a first install (nothing to compare) renders and checks while helm merges
      // the values for the labels, instead of after it.
      const labels = digestLabels(await digests());
      return await runUpgrade({ everDeployed, revisions: history.length, labels, lease: Promise.resolve(held), postRendererArgs: airgap.postRendererArgs, env: airgap.env });
    }, { chartValuesByCaller: true });
  } finally {
    await (lease as ReleaseLease | undefined)?.release();
  }
}

/** Thrown when the render gate stopped helm so that the run starts over without it. */
class RestartRun extends Error {}

/** Pure: the same revisions with the same statuses (the release untouched between two reads). */
export function sameRevisions(now: RevisionLabels[], before: RevisionLabels[]): boolean {
  return now.length === before.length && now.every((r, i) => r.revision === before[i]!.revision && r.status === before[i]!.status);
}

/** The render check and the registry preflight alone, for a run that cannot reach the cluster. */
async function checksWithoutCluster(o: InstallOptions, state: RunState, start: CommandStart): Promise<void> {
  const { logger, chart, release, resolved, helm } = start;
  await withAirgap(o, { chart, helm, release, logger }, toValuesArguments(resolved), async (airgap) => {
    await renderThenPreflight(o, state, start, airgap, toValuesArguments(resolved, airgap.generated.map((g) => g.file)));
  });
}

/** The checks that need no cluster, one after the other: templates and schema, then the images. Returns the rendered chart, CRDs included. */
async function renderThenPreflight(o: InstallOptions, state: RunState, start: CommandStart, airgap: AirgapSetup, values: ValuesArguments): Promise<string> {
  const { logger, chart, release, helm } = start;
  const stage = stageGate(state);
  stage('render check');
  const manifests = await renderCheck(start, airgap, values, o.namespace, state.signal);
  warnUnrewrittenHooks(o, start, airgap);
  if (airgap.preflight && !o.skipPreflight) {
    stage('registry preflight');
    await untilAborted(airgap.preflight(logger, { pullSecretFile: o.pullSecretFile, caFile: o.registryCaFile, secrets: state.secrets }), state.signal, 'registry preflight');
  }
  return manifests;
}

/**
 * Templates and schema, and the image rewrite, before the cluster is touched; the rendered chart
 * (CRDs included: helm creates those from crds/ too, and the RBAC preflight must see them). With
 * --registry the image plan already rendered the chart with these very values: that render is
 * checked by the post-renderer's own code in this process instead of asking helm again.
 */
async function renderCheck(start: CommandStart, airgap: AirgapSetup, values: ValuesArguments, namespace: string | undefined, signal: AbortSignal): Promise<string> {
  const { release, chart, helm } = start;
  if (airgap.rendered && airgap.rewrite) {
    const { rewriteRendered } = await import('../airgap.js');
    rewriteRendered(airgap.rendered.manifests, airgap.rewrite);
    return airgap.rendered.manifests;
  }
  return helm.template({ release, chart: chart.path, namespace, values, postRendererArgs: airgap.postRendererArgs, includeCrds: true }, airgap.env, signal);
}

/** With --skip-preflight the hook images helm 3 does not post-render are still named. */
function warnUnrewrittenHooks(o: InstallOptions, start: CommandStart, airgap: AirgapSetup): void {
  if (!o.skipPreflight) return;
  for (const h of airgap.unrewrittenHooks) {
    start.logger.warn(
      { image: h.image, hook: h.hook, kind: h.kind, name: h.name },
      `helm 3 does not post-render hooks: ${h.image} (${describeOccurrence(h)}) is pulled as it is (--skip-preflight)`,
    );
  }
}

/** --dry-run: helm's server-side dry run; no Lease, no recovery, nothing written. */
async function dryRun(o: InstallOptions, state: RunState, start: CommandStart, started: number): Promise<number> {
  const { logger, chart, release, resolved, helm } = start;
  const stage = stageGate(state);
  // Renders with the cluster's version and APIs, as helm's server-side dry run does. A kubeconfig
  // that cannot be loaded is reported after the checks that need no cluster (below).
  const cluster = await connectKube().catch(() => undefined);
  const discovery = cluster && readClusterDiscovery(cluster.config).read();
  discovery?.catch(() => undefined);
  helm.setRenderFlags(clusterRenderFlags(discovery, logger));
  return withAirgap(o, { chart, helm, release, logger }, toValuesArguments(resolved), async (airgap) => {
    const values = toValuesArguments(resolved, airgap.generated.map((g) => g.file));
    const manifests = await renderThenPreflight(o, state, start, airgap, values);
    if (!o.skipPreflight) {
      stage('rbac preflight');
      const kube = cluster ?? (await connectKube());
      const { rbacPreflight, RbacQueries } = await import('../rbac/rbac-preflight.js');
      const queries = RbacQueries.of(kube.config, discovery?.then((d) => d.resources));
      await untilAborted(rbacPreflight({ manifests, releaseNamespace: o.namespace ?? helmDefaultNamespace(kube.config) }, logger, kube.config, queries), state.signal, 'rbac preflight');
    }
    stage('reading release history');
    const history = await helm.history(release, o.namespace, undefined, state.signal);
    const last = history.at(-1);
    if (last && isPending(last.status)) {
      throw new ReleaseBusyError(`release ${release} is ${last.status} (revision ${last.revision}): a dry run does not recover it`, {
        hint: 'Run without --dry-run: the installer recovers a release that a killed operation left pending.',
      });
    }
    stage('dry run');
    await helm.upgradeInstall(
      {
        release,
        chart: chart.path,
        namespace: o.namespace,
        values,
        timeout: o.timeout,
        historyMax: o.historyMax,
        dryRun: true,
        takeOwnership: o.takeOwnership === 'always',
        postRendererArgs: airgap.postRendererArgs,
        extraArgs: o.helmArgs,
      },
      { signal: state.signal, env: airgap.env },
    );
    logger.info({ release, dryRun: true }, 'done');
    writeSync(2, `${successSummary({ release, namespace: o.namespace, action: 'dry run', chart: `${chart.name}-${chart.version}`, seconds: (Date.now() - started) / 1000 })}\n`);
    return 0;
  });
}

function applySettings(o: InstallOptions): ApplySettings {
  return { registry: o.registry, imagePullSecret: o.imagePullSecret, imagePaths: o.imagePaths, helmArgs: o.helmArgs, installerVersion: installerVersion() };
}

type LayerBytes = { source: string; content: Buffer }[];

/** The chart and the inputs as given: no helm run. */
function inputDigests(o: InstallOptions, chartPath: string, layers: LayerBytes, resolved: ResolvedValues): InputDigests {
  return { chart: chartDigest(chartPath), input: inputDigest(layers, resolved.sets, applySettings(o)) };
}

async function releaseDigests(o: InstallOptions, known: InputDigests, layers: LayerBytes, helm: HelmClient, resolved: ResolvedValues, signal: AbortSignal): Promise<ReleaseDigests> {
  // The layers as written when that reading applies (no helm run), else helm's own merge of them.
  const written = valuesAsWritten(layers.map((l) => l.content));
  if (written) return { ...known, values: writtenValuesDigest(written, resolved.sets, applySettings(o)) };
  const merged = await helm.mergedValues(toValuesArguments(resolved), signal);
  return { ...known, values: valuesDigest(merged, applySettings(o)) };
}

function failedFastError(release: string, action: string, problems: Problem[], boundMs: number): HelmOperationError {
  const first = problems[0]!;
  return new HelmOperationError(
    [
      `${action} of release ${release} failed fast: ${first.object} stayed ${first.reason} for ${Math.round(boundMs / 1000)}s, which waiting does not fix`,
      ...describeProblems(problems),
      'helm was stopped and rolled the release back (a first install is removed).',
    ].join('\n'),
    {
      hint:
        first.reason === 'CrashLoopBackOff'
          ? 'Fix what makes the container exit (its last log lines are above), then run again.'
          : 'Make the image available (push it to the registry, fix the name or the pull secret), then run again; --fail-fast-after (HELM_INSTALLER_FAIL_FAST_AFTER) sets the bound.',
    },
  );
}

/** Helm's failure plus what was not ready and why (read now, or the last seen while waiting). */
async function withCauses(err: HelmOperationError, scope: DiagnosisScope, lastSeen: Problem[]): Promise<HelmOperationError> {
  const now = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
  const problems = now.length > 0 ? now : lastSeen;
  if (problems.length === 0) return err;
  const [first = '', ...rest] = err.message.split('\n');
  return new HelmOperationError([first, 'not ready:', ...describeProblems(problems).map((l) => `  ${l}`), ...rest].join('\n'), { hint: err.hint, cause: err });
}

/**
 * Marks the stage in progress, after checking that no signal arrived: a SIGTERM during render,
 * preflight or history stops the run before the next stage instead of going on to the upgrade.
 */
function stageGate(state: RunState): (name: string) => void {
  return (name) => {
    if (state.signal.aborted) {
      throw new TransientError(`interrupted (SIGTERM/SIGINT) during ${state.progress.action}; stopped before ${name}`, {
        hint: 'Run the installer again; a release left pending by an interrupted operation is recovered by the next run.',
      });
    }
    state.progress.action = name;
  };
}

/** Rejects as soon as the signal fires (the work itself changes nothing, so it is left behind). */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) throw interrupted(what);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(interrupted(what));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function interrupted(what: string): TransientError {
  return new TransientError(`interrupted (SIGTERM/SIGINT) during ${what}; nothing was changed`, { hint: 'Run the installer again.' });
}
