// A release plan in the cluster (install, plan): the run's namespace (--namespace, else helm's
// default) settled, and the plan's graph in it. The plan itself was read once (app-input.ts).
import { connectKube, helmDefaultNamespace, type KubeClients } from '../cluster/kube-client.js';
import type { CommonOptions } from '../options/config.js';
import type { RunState } from '../run/run-state.js';
import type { ReleasePlan } from '../inputs/plan-file.js';
import { planGraph, type PlanGraph } from './plan-graph.js';

/** The cluster, the run's namespace (--namespace, else helm's default) and the graph in it. */
export async function planInCluster(
  o: CommonOptions,
  state: RunState,
  plan: ReleasePlan,
): Promise<{ kube: KubeClients; namespace: string; graph: PlanGraph }> {
  state.progress.action = 'connecting to the cluster';
  const kube = await connectKube();
  const namespace = o.namespace ?? helmDefaultNamespace(kube.config);
  state.progress.namespace = namespace;
  return { kube, namespace, graph: planGraph(plan, namespace, process.env) };
}
