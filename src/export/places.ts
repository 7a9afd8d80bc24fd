// Which releases the export holds and where each goes: one chart (one folder named after its
// release), or every release the plan installs, its `enabled` evaluated as install evaluates it,
// in the plan's order. No cluster: a release without a namespace gets --namespace, else `default`.
import type { CommonOptions } from '../options/config.js';
import { chartOptions, type AppInput, type OpenedPlan } from '../inputs/app-input.js';
import { planGraph } from '../releases/plan-graph.js';
import type { ReleasePlace } from './render-release.js';

interface PlacedRelease<O> {
  options: O;
  place: ReleasePlace;
  /** The run state of this release (a plan's releases each log with their own key). */
  key?: string;
}

export interface ExportScope<O> {
  /** The OCIRepository's name: the plan's app, else the release's name. */
  app?: string;
  releases: PlacedRelease<O>[];
}

/** The app's releases as the export places them: one chart, or the plan's enabled releases. */
export function exportScope<O extends CommonOptions & { timeout: string }>(o: O, input: AppInput): ExportScope<O> {
  return input.plan ? planReleases(o, input) : singleChart(o);
}

function singleChart<O extends CommonOptions & { timeout: string }>(o: O): ExportScope<O> {
  const namespace = o.namespace ?? 'default';
  // The folder '' is the release's name, settled once the chart is read (render-release.ts).
  return {
    releases: [{ options: o, place: { folder: o.release ?? '', namespace, dependsOn: [], timeout: o.timeout } }],
  };
}

function planReleases<O extends CommonOptions & { timeout: string }>(
  o: O,
  { plan, shared }: OpenedPlan,
): ExportScope<O> {
  const graph = planGraph(plan, o.namespace ?? 'default', process.env);
  // A folder is the release's name, or namespace-name where two namespaces share a name.
  const names = graph.enabled.map((r) => r.name);
  const folderOf = new Map(
    graph.enabled.map((r) => [
      r.key,
      names.filter((n) => n === r.name).length > 1 ? `${r.namespace}-${r.name}` : r.name,
    ]),
  );
  return {
    app: graph.app,
    releases: graph.enabled.map((r) => ({
      options: { ...chartOptions(o, r, shared), namespace: r.namespace },
      place: {
        folder: folderOf.get(r.key)!,
        namespace: r.namespace,
        dependsOn: r.deps.map((d) => folderOf.get(d)!),
        timeout: r.timeout ?? o.timeout,
      },
      key: r.key,
    })),
  };
}
