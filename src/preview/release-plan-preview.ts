// `plan` (and `install --plan-only`) with a release plan, around the releases' plans (each as
// `plan` gives it for one chart: plan-reports.ts): the plan's graph in the cluster before them;
// after them, the releases the next install would uninstall and the app revision it would make.
// The exit code is 10 when any release would change or go, 0 when nothing would.
import type { KubeClients } from '../cluster/kube-client.js';
import { createBaseContext } from '../run/base-context.js';
import { ExitCode } from '../common/exit-codes.js';
import { planJson } from './format-json.js';
import { formatMarkdown } from './format-markdown.js';
import { formatText, useColor } from './format-text.js';
import type { PlanCommandOptions } from './plan-options.js';
import type { PlanReport } from './plan-types.js';
import { countLine } from './summary.js';
import { fitSummary, writeSummary } from '../run/report.js';
import type { RunState } from '../run/run-state.js';
import type { AppRollback } from '../reconcile/install-options.js';
import { lastGood, nextRevision, type AppRevision } from '../releases/app-revision.js';
import { pruneOrder, readInventory, type InventoryEntry } from '../releases/inventory.js';
import type { AppInput } from '../inputs/app-input.js';
import { planInCluster, type PlanInCluster } from '../releases/open-plan.js';
import type { PlanGraph } from '../inputs/plan-graph.js';
import { ownership } from '../releases/prune-releases.js';

export interface Removal {
  namespace: string;
  name: string;
  /** `uninstall`: ours, the next install removes it; `left alone`: someone else's now. */
  action: 'uninstall' | 'left alone';
}

/** Before the releases' plans: the plan's graph in the cluster (exit 3 on a bad plan). */
export async function openPlanPreview(
  o: PlanCommandOptions,
  state: RunState,
  input: AppInput,
  destination: 1 | 2,
): Promise<PlanInCluster<PlanCommandOptions>> {
  createBaseContext(o, destination, state);
  return planInCluster(o, state, input);
}

/** After them: what the next install would uninstall, the app revision it would make, all printed. */
export async function writeReleasesPlan(
  o: PlanCommandOptions,
  state: RunState,
  { kube, namespace, graph }: PlanInCluster<PlanCommandOptions>,
  reports: PlanReport[],
  mode: { planOnly: boolean },
): Promise<number> {
  const inventory = await readInventory(kube, namespace, graph.app);
  const removals = o.pruneReleases ? await plannedRemovals(kube, inventory.releases, graph) : [];
  const changes =
    reports.some((r) => r.decision.action !== 'nothing') || removals.some((r) => r.action === 'uninstall');
  const app = appPlan(inventory.revisions, changes, o.appRollback);
  const text = format(
    o.output,
    graph.app,
    app,
    reports,
    removals,
    !mode.planOnly && useColor(process.stdout, process.env),
  );
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(text, (error) => (error ? reject(error) : resolve())),
  );
  if (!mode.planOnly) return changes ? ExitCode.changesPlanned : ExitCode.ok;
  const lines = [
    ...reports.map((r) => `${r.namespace}/${r.release}: ${r.decision.action}; ${countLine(r.entries)}`),
    ...removals.map((r) => `${r.namespace}/${r.name}: ${r.action} (no longer in the plan)`),
  ];
  writeSummary(state.terminationLog, {
    terminationMessage: fitSummary(
      [`plan only: release plan of ${reports.length} release(s); ${appPlanLine(app)}`],
      lines.map((l) => `  ${l}`),
      [],
    ),
  });
  return ExitCode.ok;
}

/** The app revision the install would make: none when nothing would change. */
export interface AppPlan {
  /** The app revision the cluster is at: the last good one. */
  current?: number;
  next?: number;
  rollback: AppRollback;
}

export function appPlan(revisions: readonly AppRevision[], changes: boolean, rollback: AppRollback): AppPlan {
  const good = lastGood(revisions)?.revision;
  return {
    ...(good !== undefined ? { current: good } : {}),
    ...(changes ? { next: nextRevision(revisions) } : {}),
    rollback,
  };
}

/** Pure: one line for people. */
export function appPlanLine(a: AppPlan): string {
  const now = a.current !== undefined ? `app revision ${a.current}` : 'no app revision yet';
  if (a.next === undefined) return `nothing would change: the app stays at ${now}`;
  const onFailure =
    a.rollback === 'on-failure'
      ? `a failure takes every release back to ${a.current !== undefined ? `app revision ${a.current}` : 'nothing installed'}`
      : 'a failure leaves each release where it is (--app-rollback never)';
  return `the install would make app revision ${a.next} (from ${now}); ${onFailure}`;
}

/** The inventory's releases that the next install would uninstall (in the run's namespace, as install keeps it). */
async function plannedRemovals(kube: KubeClients, listed: InventoryEntry[], graph: PlanGraph): Promise<Removal[]> {
  const keep = new Set(graph.enabled.map((r) => r.key));
  const removals: Removal[] = [];
  for (const e of pruneOrder(listed, keep)) {
    const { owner } = await ownership(kube, e, graph.app);
    if (owner !== 'gone')
      removals.push({ namespace: e.namespace, name: e.name, action: owner === 'ours' ? 'uninstall' : 'left alone' });
  }
  return removals;
}

function format(
  output: PlanCommandOptions['output'],
  app: string,
  appRevision: AppPlan,
  reports: PlanReport[],
  removals: Removal[],
  color: boolean,
): string {
  if (output === 'json') {
    const json = { schemaVersion: 1, app, appRevision, releases: reports.map(planJson), uninstall: removals };
    return `${JSON.stringify(json, null, 2)}\n`;
  }
  const head = `App ${app}: ${appPlanLine(appRevision)}`;
  const gone = removals.map(
    (r) =>
      `${r.namespace}/${r.name}: ${r.action === 'uninstall' ? 'would be uninstalled' : "left alone (not this app's)"}: no longer in the plan`,
  );
  if (output === 'markdown')
    return [
      `**${head}**`,
      '',
      ...reports.map(formatMarkdown),
      ...(gone.length ? ['### Releases the plan no longer installs', '', ...gone.map((g) => `- ${g}`), ''] : []),
    ].join('\n');
  return [
    head,
    '',
    ...reports.map((r) => formatText(r, { color })),
    ...(gone.length ? ['Releases the plan no longer installs:', ...gone.map((g) => `  ${g}`), ''] : []),
  ].join('\n');
}
