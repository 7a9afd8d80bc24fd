// Every release's plan, as `plan` gives it for one chart: the app's releases (one chart is a list
// of one, in the run's own state; a release plan's each in its own, at most --max-parallel at once).
import type { ScheduledRelease } from '../inputs/app-input.js';
import { installRun, type InstallRun } from '../reconcile/install-run.js';
import { releaseOptions } from '../releases/release-options.js';
import { memberState, Slots } from '../releases/run-graph.js';
import { startRun } from '../run/run-context.js';
import type { RunState } from '../run/run-state.js';
import type { PlanCommandOptions } from './plan-options.js';
import type { PlanReport } from './plan-types.js';
import { buildPlanReport } from './preview.js';

export async function planReports(
  releases: ScheduledRelease<PlanCommandOptions>[],
  c: { state: RunState; maxParallel: number; showSecrets: boolean; destination: 1 | 2 },
): Promise<{ report: PlanReport; run: InstallRun }[]> {
  const slots = new Slots(c.maxParallel);
  return Promise.all(
    releases.map(async (r) => {
      await slots.acquire();
      try {
        const state = r.key ? memberState(c.state, r.key) : c.state;
        const run = installRun(await startRun(releaseOptions(r), state, c.destination, { deferChartValues: true }));
        return { report: await buildPlanReport(run, { showSecrets: c.showSecrets }), run };
      } finally {
        slots.release();
      }
    }),
  );
}
