// Each release of a plan is installed as a single chart is: install's options with the release's
// chart, name, namespace, vendor values and timeout, and the customer's values shared out to it
// by name (src/inputs/app-input.ts).
import type { InstallOptions } from '../install/install-options.js';
import type { SharedValues } from '../inputs/app-input.js';
import type { CommonOptions } from '../options/config.js';
import type { PlannedRelease } from '../inputs/plan-file.js';
import type { GraphRelease } from './plan-graph.js';


/** Any command's options for one release of the plan: its chart, name, namespace and values. */
export function chartOptions<O extends CommonOptions>(o: O, r: Pick<PlannedRelease, 'name' | 'chart' | 'values' | 'namespace'>, shared: SharedValues): O {
  return {
    ...o,
    releasesFile: undefined,
    chart: r.chart,
    release: r.name,
    namespace: r.namespace ?? o.namespace,
    baseValues: r.values,
    values: shared.files.get(r.name) ?? [],
    sets: shared.sets.get(r.name) ?? [],
  };
}

/** Install's options for one release: its own timeout too. */
export function releaseOptions(o: InstallOptions, r: GraphRelease, shared: SharedValues): InstallOptions {
  return { ...chartOptions(o, r, shared), timeout: r.timeout ?? o.timeout, planOnly: false };
}
