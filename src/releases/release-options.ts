// Each release of the app is installed as a single chart is: install's options with the release's
// chart, name, namespace, vendor values and the customer's values shared out to it by name
// (src/inputs/app-input.ts), and its own timeout.
import type { InstallOptions } from '../reconcile/install-options.js';
import type { ScheduledRelease } from '../inputs/app-input.js';

/** Install's options for one release: its own timeout too; never a preview (the run is the install). */
export function releaseOptions<O extends InstallOptions>(r: ScheduledRelease<O>): O {
  return { ...r.options, timeout: r.timeout ?? r.options.timeout, planOnly: false };
}
