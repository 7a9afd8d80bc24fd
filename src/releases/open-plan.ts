// What every command does first with a release plan (install, plan, images): refuse the options
// that name one chart, read and check the plan file, share the customer's values out by release
// name, and (with a cluster) settle the run's namespace and the graph.
import { connectKube, helmDefaultNamespace, type KubeClients } from '../cluster/kube-client.js';
import { defaultBaseValues, type CommonOptions } from '../config.js';
import { UsageError } from '../errors.js';
import type { RunState } from '../run-state.js';
import { readPlanFile, type ReleasePlan } from './plan-file.js';
import { planGraph, type PlanGraph } from './plan-graph.js';
import { shareValues, type SharedValues } from './release-options.js';

export interface OpenedPlan {
  plan: ReleasePlan;
  shared: SharedValues;
}

export function openPlan(o: CommonOptions, state: RunState, file: string): OpenedPlan {
  const hint = 'A release plan names each release, its chart and namespace: remove the option, or drop --releases-file to use one chart.';
  if (o.chart !== undefined) throw new UsageError('--chart (HELM_INSTALLER_CHART) and a release plan (--releases-file) were both given', { hint });
  if (o.release !== undefined) throw new UsageError("--release (HELM_INSTALLER_RELEASE) names one chart's release; the release plan names its own", { hint });
  // Only the default (<app-dir>/values) may be there: the plan gives each release its own vendor
  // values, and a --base-values that was silently dropped would be a trap.
  if (o.baseValues.join('\0') !== defaultBaseValues(o.appDir).join('\0')) {
    throw new UsageError('--base-values (HELM_INSTALLER_BASE_VALUES) was given, but a release plan names each release\'s vendor values (its `values` list)', { hint });
  }
  state.progress.action = 'reading the release plan';
  const plan = readPlanFile(file, o.appDir);
  return { plan, shared: shareValues(o, [...new Set(plan.releases.map((r) => r.name))]) };
}

/** The cluster, the run's namespace (--namespace, else helm's default) and the graph in it. */
export async function planInCluster(o: CommonOptions, state: RunState, plan: ReleasePlan): Promise<{ kube: KubeClients; namespace: string; graph: PlanGraph }> {
  state.progress.action = 'connecting to the cluster';
  const kube = await connectKube();
  const namespace = o.namespace ?? helmDefaultNamespace(kube.config);
  state.progress.namespace = namespace;
  return { kube, namespace, graph: planGraph(plan, namespace, process.env) };
}
