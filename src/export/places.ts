// Which releases the export holds and where each goes: one chart (one folder named after its
// release), or every release the plan installs, its `enabled` evaluated as install evaluates it,
// in the plan's order. No cluster: a release without a namespace gets --namespace, else `default`.
import type { CommonOptions } from '../options/config.js';
import { appGraph, type AppInput } from '../inputs/app-input.js';
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
  const { releases, scope } = appGraph(o, input, o.namespace ?? 'default', process.env);
  // A folder is the release's name, or namespace-name where two namespaces share a name; one
  // chart's '' is its release's name, settled once the chart is read (render-release.ts).
  const names = releases.map((r) => r.name);
  const folderOf = new Map(
    releases.map((r) => [
      r.key,
      names.filter((n) => n === r.name).length > 1 ? `${r.namespace}-${r.name}` : (r.name ?? ''),
    ]),
  );
  return {
    ...(scope ? { app: scope.graph.app } : {}),
    releases: releases.map((r) => ({
      options: r.options,
      place: {
        folder: folderOf.get(r.key)!,
        namespace: r.namespace,
        dependsOn: r.deps.map((d) => folderOf.get(d)!),
        timeout: r.timeout ?? o.timeout,
      },
      ...(r.key ? { key: r.key } : {}),
    })),
  };
}
