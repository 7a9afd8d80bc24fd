// Each release of a plan is installed as a single chart is: install's options with the release's
// chart, name, namespace, vendor values and timeout, and the customer's values shared out to it
// by name (src/inputs/app-input.ts).
import type { InstallOptions } from '../reconcile/install-options.js';
import { chartOptions, type SharedValues } from '../inputs/app-input.js';
import type { GraphRelease } from './plan-graph.js';

/** Install's options for one release: its own timeout too. */
export function releaseOptions(o: InstallOptions, r: GraphRelease, shared: SharedValues): InstallOptions {
  return { ...chartOptions(o, r, shared), timeout: r.timeout ?? o.timeout, planOnly: false };
}
