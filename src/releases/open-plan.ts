// A release plan in the cluster (install, plan): the run's namespace (--namespace, else helm's
// default) settled, and the app's releases in it. The plan itself was read once (app-input.ts).
import { connectKube, helmDefaultNamespace, type KubeClients } from '../cluster/kube-client.js';
import type { CommonOptions } from '../options/config.js';
import type { RunState } from '../run/run-state.js';
import { appGraph, type AppInput, type ScheduledRelease } from '../inputs/app-input.js';
import type { PlanGraph } from '../inputs/plan-graph.js';

export interface PlanInCluster<O> {
  kube: KubeClients;
  namespace: string;
  releases: ScheduledRelease<O>[];
  graph: PlanGraph;
  file: string;
}

/** The cluster, the run's namespace and the plan's releases in it: for an input with a release plan (app-input.ts appScope). */
export async function planInCluster<O extends CommonOptions>(
  o: O,
  state: RunState,
  input: AppInput,
): Promise<PlanInCluster<O>> {
  state.progress.action = 'connecting to the cluster';
  const kube = await connectKube();
  const namespace = o.namespace ?? helmDefaultNamespace(kube.config);
  state.progress.namespace = namespace;
  const { releases, scope } = appGraph(o, input, namespace, process.env);
  if (!scope) throw new Error('internal: a release plan was asked of one chart');
  return { kube, namespace, releases, ...scope };
}
