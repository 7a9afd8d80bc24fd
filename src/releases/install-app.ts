// `install` of the app: its releases run by one scheduler (run-graph.ts), each by install.ts. One
// chart is a list of one, run as the run's own release: its summary, exit code, Events and logs
// are a single chart's, and its failure is main.ts's to report. What only a release plan has (its
// graph in the cluster, the inventory and app revisions, the app rollback, prune of what it
// dropped, the last-run ConfigMap: install-plan.ts) is decided here, once, by the input.
import { appGraph, appScope, type AppInput } from '../inputs/app-input.js';
import type { InstallOptions } from '../reconcile/install-options.js';
import type { RunState } from '../run/run-state.js';
import { runGraph, type InstallOne } from './run-graph.js';

export async function installApp(
  o: InstallOptions,
  state: RunState,
  input: AppInput,
  install: InstallOne,
): Promise<number> {
  // No cluster is asked for one chart here: its own run connects (and names its namespace). The
  // plan's steps load only for a plan (a chunk of their own in the bundle).
  const planSteps = appScope(input) ? await import('./install-plan.js') : undefined;
  const plan = await planSteps?.openAppRun(o, state, input);
  const releases = plan?.releases ?? appGraph(o, input, o.namespace ?? 'default', process.env).releases;
  const outcomes = await runGraph(releases, { maxParallel: o.maxParallel, state, install, ...plan?.schedule });
  if (planSteps && plan) return planSteps.finishAppRun(plan, outcomes);
  // One chart: the release's own exit code (had it failed, runGraph would have thrown its error).
  const [own] = outcomes;
  if (own?.status !== 'done') throw new Error('internal: the one chart neither finished nor failed');
  return own.exitCode ?? 0;
}
