// `install` with a release plan (releases.yaml): read and check the plan (exit 3 before anything
// is touched), install its releases in dependency order (run-graph.ts), uninstall what it no
// longer installs (only this app's releases; --prune-releases false keeps them), remember what it
// installed (inventory.ts), and report every release with what happened to it. The exit code is
// the most severe of the releases'.
import { writeSync } from 'node:fs';
import type { KubeClients } from '../cluster/kube-client.js';
import { createBaseContext, createHelmClient } from '../context.js';
import { ExitCode, UsageError } from '../errors.js';
import type { InstallOptions } from '../install/install-options.js';
import type { Logger } from '../logger.js';
import { toInstallerError, writeTerminationMessage } from '../report.js';
import type { RunState } from '../run-state.js';
import { readInventory, writeInventory, pruneOrder, type InventoryEntry } from './inventory.js';
import { openPlan, planInCluster } from './open-plan.js';
import type { PlanGraph } from './plan-graph.js';
import { planSummary, type ReleaseOutcome } from './plan-summary.js';
import { pruneRelease } from './prune-releases.js';
import { runGraph, type InstallOne } from './run-graph.js';

export async function installPlan(o: InstallOptions, state: RunState, file: string, install: InstallOne): Promise<number> {
  const started = Date.now();
  const { logger } = createBaseContext(o, 1, state);
  if (o.dryRun) throw new UsageError('--dry-run is not supported with a release plan yet', { hint: 'Run `plan` (every release of the plan), or `install --dry-run` with --chart for one release.' });
  const { plan, shared } = openPlan(o, state, file);
  const { kube, namespace, graph } = await planInCluster(o, state, plan);
  for (const d of graph.ignoredDeps) logger.info(d, `${d.release} depends on ${d.dependsOn}, which the plan does not install (enabled is false): not waited for`);
  logger.info({ plan: file, app: graph.app, order: graph.enabled.map((r) => r.key), disabled: graph.disabled.map((r) => r.key), maxParallel: o.maxParallel }, `release plan: ${graph.enabled.length} release(s) to install`);
  state.progress.action = 'installing the releases of the plan';
  const outcomes = await runGraph(graph, { o, state, shared, install });
  // The releases are done whatever happens here: a failure to read or write the inventory is
  // reported beside them, not instead of them.
  const pruned = await prune(o, state, { kube, namespace, graph, logger, outcomes }).catch((error: unknown) => [
    { key: `${namespace}/inventory`, status: 'prune failed' as const, error: toInstallerError(error) },
  ]);
  outcomes.push(...pruned);
  const { text, exitCode } = planSummary(outcomes, (Date.now() - started) / 1000, state.secrets);
  logger.info({ exitCode, releases: outcomes.map((x) => ({ release: x.key, status: x.status })) }, 'release plan finished');
  if (exitCode !== ExitCode.ok && state.terminationLog) writeTerminationMessage(state.terminationLog, text);
  writeSync(2, `${text}\n`);
  return exitCode;
}

/**
 * Uninstalls the inventory's releases that the plan no longer installs, then writes the new
 * inventory. Skipped while any release of the plan failed: a run that went wrong removes nothing;
 * the next good run does it. A release kept (pruning off, or its uninstall failed) stays listed.
 */
async function prune(
  o: InstallOptions,
  state: RunState,
  c: { kube: KubeClients; namespace: string; graph: PlanGraph; logger: Logger; outcomes: ReleaseOutcome[] },
): Promise<ReleaseOutcome[]> {
  const installed: InventoryEntry[] = c.graph.enabled.map((r) => ({ namespace: r.namespace, name: r.name, deps: r.deps }));
  const keep = new Set(installed.map((e) => `${e.namespace}/${e.name}`));
  const previous = await readInventory(c.kube, c.namespace, c.graph.app);
  const candidates = pruneOrder(previous, keep);
  const failed = c.outcomes.some((x) => x.status !== 'done');
  const results: ReleaseOutcome[] = [];
  const kept: InventoryEntry[] = [];
  if (candidates.length > 0 && (failed || !o.pruneReleases)) {
    c.logger.info({ releases: candidates.map((e) => `${e.namespace}/${e.name}`) }, failed ? 'not uninstalling what the plan dropped: a release of this run failed' : 'not uninstalling what the plan dropped: --prune-releases false');
    kept.push(...candidates);
  } else if (candidates.length > 0) {
    state.progress.action = 'uninstalling what the plan dropped';
    const helm = await createHelmClient(o, { logger: c.logger, secrets: state.secrets });
    for (const e of candidates) {
      const key = `${e.namespace}/${e.name}`;
      try {
        results.push({ key, status: 'pruned', result: await pruneRelease({ kube: c.kube, helm, app: c.graph.app, o, logger: c.logger, signal: state.signal }, e) });
      } catch (error) {
        results.push({ key, status: 'prune failed', error: toInstallerError(error) });
        kept.push(e);
      }
    }
  }
  await writeInventory(c.kube, c.namespace, c.graph.app, [...installed, ...kept], o.appSlug);
  return results;
}
