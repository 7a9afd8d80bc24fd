// What only `install` with a release plan (releases.yaml) does around its releases (install-app.ts
// runs them): read and check the plan (exit 3 before anything is touched), and treat the run as one
// app revision (app-revision.ts): when a release fails, the app goes back to its last good
// revision (--app-rollback on-failure), else what the plan no longer installs is uninstalled
// (only this app's releases; --prune-releases false keeps them). The inventory remembers what
// was installed and every app revision (inventory.ts); the summary names each release and the
// app revision the cluster is left at. The exit code is the most severe of the releases'.
import type { KubeClients } from '../cluster/kube-client.js';
import { createBaseContext, createHelmClient } from '../run/base-context.js';
import { UsageError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { InstallOptions } from '../reconcile/install-options.js';
import type { Logger } from 'pino';
import { toInstallerError, writeSummary } from '../run/report.js';
import type { RunState } from '../run/run-state.js';
import { recordOutcome } from '../run/record.js';
import { lastGood, nextRevision, revisionOf, rollbackSteps, withRevision } from './app-revision.js';
import { deployedRevisions, rollBackApp, rollbackText, type RollbackResult } from './app-rollback.js';
import { lastRunData, writeLastRun } from './last-run.js';
import {
  OWNER_LABEL,
  listedAfterFailure,
  readInventory,
  writeInventory,
  pruneOrder,
  type Inventory,
  type InventoryEntry,
} from './inventory.js';
import type { AppInput, ScheduledRelease } from '../inputs/app-input.js';
import { planInCluster } from './open-plan.js';
import type { PlanGraph } from '../inputs/plan-graph.js';
import { planSummary } from './plan-summary.js';
import { type ReleaseOutcome } from './release-outcome.js';
import { pruneRelease } from './prune-releases.js';
import type { GraphRun } from './run-graph.js';

/** A release plan's run, before its releases: what the app revision is made from afterwards. */
export interface AppRun {
  o: InstallOptions;
  state: RunState;
  kube: KubeClients;
  namespace: string;
  graph: PlanGraph;
  logger: Logger;
  releases: ScheduledRelease<InstallOptions>[];
  /** How the scheduler runs them: each labelled as the app's; one failure stops the rest with --app-rollback on-failure. */
  schedule: Pick<GraphRun, 'labels' | 'stopOnFailure'>;
  started: number;
}

/** Reads the plan's graph in the cluster (exit 3 on a bad plan, before anything is touched) and says what the run installs. */
export async function openAppRun(o: InstallOptions, state: RunState, input: AppInput): Promise<AppRun> {
  const started = Date.now();
  const { logger } = createBaseContext(o, 1, state);
  if (o.dryRun)
    throw new UsageError('--dry-run is not supported with a release plan yet', {
      hint: 'Run `plan` (every release of the plan), or `install --dry-run` with --chart for one release.',
    });
  const { kube, namespace, graph, releases, file } = await planInCluster(o, state, input);
  for (const d of graph.ignoredDeps)
    logger.info(
      d,
      `${d.release} depends on ${d.dependsOn}, which the plan does not install (enabled is false): not waited for`,
    );
  logger.info(
    {
      plan: file,
      app: graph.app,
      order: graph.enabled.map((r) => r.key),
      disabled: graph.disabled.map((r) => r.key),
      maxParallel: o.maxParallel,
    },
    `release plan: ${graph.enabled.length} release(s) to install`,
  );
  state.progress.action = 'installing the releases of the plan';
  const schedule = { labels: { [OWNER_LABEL]: graph.app }, stopOnFailure: o.appRollback === 'on-failure' };
  return { o, state, kube, namespace, graph, logger, releases, schedule, started };
}

/**
 * After the releases: the run as one app revision. Only plan runs write the inventory, at their
 * end: read now, it is what it was before this run (the last good app revision, what a failure
 * goes back to). Read after the releases, so a release's own failure (helm missing, bad input)
 * is the one reported.
 */
export async function finishAppRun(run: AppRun, outcomes: ReleaseOutcome[]): Promise<number> {
  const { o, state, kube, namespace, graph, logger } = run;
  // The releases are done whatever happens here: a failure to read the inventory, roll back, prune
  // or write the inventory is reported beside them, not instead of them. Without the inventory
  // the last good app revision is unknown: nothing is rolled back, pruned or recorded.
  const inventoryFailed = (error: unknown) => [
    ...outcomes,
    { key: `${namespace}/inventory`, status: 'prune failed' as const, error: toInstallerError(error) },
  ];
  let after: After;
  try {
    const previous = await readInventory(kube, namespace, graph.app);
    const revision = nextRevision(previous.revisions);
    const done = outcomes.some((x) => x.status === 'failed')
      ? await afterFailure(run, previous, outcomes, revision)
      : await afterSuccess(run, previous, outcomes, revision);
    await writeInventory(kube, namespace, graph.app, done.inventory!, o.appSlug).catch((error: unknown) => {
      done.outcomes.push({ key: `${namespace}/inventory`, status: 'prune failed', error: toInstallerError(error) });
    });
    after = done;
  } catch (error) {
    after = { outcomes: inventoryFailed(error) };
  }
  const app = after.inventory ? { revision: after.inventory.revisions.at(-1)!, rollback: after.rollback } : undefined;
  const { text, exitCode } = planSummary(after.outcomes, (Date.now() - run.started) / 1000, state.secrets, app);
  logger.info(
    {
      exitCode,
      appRevision: app?.revision.revision,
      releases: after.outcomes.map((x) => ({ release: x.key, status: x.status })),
    },
    'release plan finished',
  );
  // For the support bundle; the run's outcome stands whether or not this is written.
  await writeLastRun(
    kube,
    namespace,
    graph.app,
    lastRunData(after.outcomes, exitCode, text, state.secrets, app?.revision),
    o.appSlug,
  ).catch((error: unknown) => {
    logger.warn({ err: (error as Error).message }, "could not leave the run's outcome for the support bundle");
  });
  writeSummary(state.terminationLog, {
    summary: text,
    ...(exitCode !== ExitCode.ok ? { terminationMessage: text } : {}),
  });
  return exitCode;
}

interface After {
  /** Undefined when it could not be read. */
  inventory?: Inventory;
  outcomes: ReleaseOutcome[];
  rollback?: RollbackResult[];
}

/** A good app revision: what the plan dropped is uninstalled now, and the revision recorded as deployed. */
async function afterSuccess(
  run: AppRun,
  previous: Inventory,
  outcomes: ReleaseOutcome[],
  revision: number,
): Promise<After> {
  const installed = installedEntries(run.graph);
  const { results, kept } = await prune(run, previous.releases, installed).catch((error: unknown) => ({
    results: [{ key: `${run.namespace}/inventory`, status: 'prune failed' as const, error: toInstallerError(error) }],
    kept: pruneOrder(previous.releases, new Set(installed.map(entryKey))),
  }));
  const next = revisionOf(
    revision,
    await deployedRevisions(run.kube, keysOf(run.graph), run.graph.app),
    outcomes,
    'deployed',
    new Date(),
  );
  return {
    inventory: { releases: [...installed, ...kept], revisions: withRevision(previous.revisions, next) },
    outcomes: [...outcomes, ...results],
  };
}

/**
 * A release failed: nothing is pruned (the next good run does it). With --app-rollback on-failure
 * every release of the plan goes back to the last good app revision; never keeps what the run
 * left, as before app revisions.
 */
async function afterFailure(
  run: AppRun,
  previous: Inventory,
  outcomes: ReleaseOutcome[],
  revision: number,
): Promise<After> {
  const keys = keysOf(run.graph);
  const current = await deployedRevisions(run.kube, keys, run.graph.app);
  const foreign = [...current].filter(([, d]) => d.ours === false).map(([key]) => key);
  if (foreign.length > 0)
    run.logger.warn(
      { releases: foreign },
      `leaving ${foreign.join(', ')} alone: the plan lists it, but it is not this app's (no ${OWNER_LABEL}=${run.graph.app} label)`,
    );
  const dropped = pruneOrder(previous.releases, new Set(keys));
  if (dropped.length > 0)
    run.logger.info(
      { releases: dropped.map(entryKey) },
      'not uninstalling what the plan dropped: a release of this run failed',
    );
  const listed = listedAfterFailure(installedEntries(run.graph), previous.releases, new Set(foreign));
  if (run.o.appRollback === 'never') {
    const left = revisionOf(revision, current, outcomes, 'failed', new Date());
    return { inventory: { releases: listed, revisions: withRevision(previous.revisions, left) }, outcomes };
  }
  const good = lastGood(previous.revisions);
  const steps = rollbackSteps(keys, current, good);
  run.state.progress.action = `rolling the app back to ${good ? `app revision ${good.revision}` : 'before its first install'}`;
  run.logger.warn(
    { appRevision: revision, backTo: good?.revision ?? null, steps },
    `app revision ${revision} failed: ${steps.length} release(s) go back to ${good ? `app revision ${good.revision}` : 'nothing (a first install)'}`,
  );
  const helm = await createHelmClient(run.o, { logger: run.logger, secrets: run.state.secrets });
  const rollback = await rollBackApp(
    { kube: run.kube, helm, app: run.graph.app, o: run.o, logger: run.logger, signal: run.state.signal },
    steps,
  );
  for (const r of rollback) recordRollback(run.state, r, revision, good?.revision);
  const gone = new Set(rollback.filter((r) => r.done && r.step.kind === 'uninstall').map((r) => r.step.key));
  const status =
    steps.length === 0 ? 'nothing changed' : rollback.every((r) => r.done) ? 'rolled back' : 'rollback failed';
  const next = revisionOf(
    revision,
    await deployedRevisions(run.kube, keys, run.graph.app),
    outcomes,
    status,
    new Date(),
    good?.revision,
  );
  return {
    inventory: {
      releases: listed.filter((e) => !gone.has(entryKey(e))),
      revisions: withRevision(previous.revisions, next),
    },
    outcomes,
    rollback,
  };
}

/** An Event and a webhook per release taken back, naming the app revision the cluster is left at. */
function recordRollback(
  state: RunState,
  r: RollbackResult,
  revision: number,
  backTo: number | undefined,
  started = Date.now(),
): void {
  const at = r.step.key.indexOf('/');
  const where = backTo !== undefined ? `app revision ${backTo}` : 'before its first install';
  recordOutcome(state, {
    reason: 'RolledBack',
    release: r.step.key.slice(at + 1),
    namespace: r.step.key.slice(0, at),
    note: `app revision ${revision} failed; the app goes back to ${where}: ${rollbackText(r)}`,
    ...(r.done && r.revision !== undefined ? { revision: r.revision } : {}),
    ...(r.done ? {} : { cause: r.error.message.split('\n')[0], exitCode: r.error.exitCode }),
    started,
  });
}

const keysOf = (graph: PlanGraph) => graph.enabled.map((r) => r.key);

function installedEntries(graph: PlanGraph): InventoryEntry[] {
  return graph.enabled.map((r) => ({ namespace: r.namespace, name: r.name, deps: r.deps }));
}

const entryKey = (e: InventoryEntry) => `${e.namespace}/${e.name}`;

/** Uninstalls the inventory's releases that the plan no longer installs; a release kept (pruning off, or its uninstall failed) stays listed. */
async function prune(
  run: AppRun,
  previous: InventoryEntry[],
  installed: InventoryEntry[],
): Promise<{ results: ReleaseOutcome[]; kept: InventoryEntry[] }> {
  const candidates = pruneOrder(previous, new Set(installed.map(entryKey)));
  if (candidates.length === 0) return { results: [], kept: [] };
  if (!run.o.pruneReleases) {
    run.logger.info(
      { releases: candidates.map(entryKey) },
      'not uninstalling what the plan dropped: --prune-releases false',
    );
    return { results: [], kept: candidates };
  }
  run.state.progress.action = 'uninstalling what the plan dropped';
  const helm = await createHelmClient(run.o, { logger: run.logger, secrets: run.state.secrets });
  const results: ReleaseOutcome[] = [];
  const kept: InventoryEntry[] = [];
  for (const e of candidates) {
    const key = entryKey(e);
    try {
      results.push({
        key,
        status: 'pruned',
        result: await pruneRelease(
          { kube: run.kube, helm, app: run.graph.app, o: run.o, logger: run.logger, signal: run.state.signal },
          e,
        ),
      });
    } catch (error) {
      results.push({ key, status: 'prune failed', error: toInstallerError(error) });
      kept.push(e);
    }
  }
  return { results, kept };
}
