// Every chart an app installs: the one chart (--chart, or the one under the app directory), or
// each chart of its release plan. What `check-chart` and the image build check before anything
// ships: a dependency missing from one of them would fail every airgapped install of that part.
import { loadChart, type ChartInfo } from './chart.js';
import { findPlanFile, readPlanFile } from './releases/plan-file.js';

export interface AppCharts {
  /** The release plan the charts come from, when there is one. */
  plan?: string;
  charts: ChartInfo[];
}

export async function loadAppCharts(o: { chart?: string; appDir: string; releasesFile?: string }): Promise<AppCharts> {
  const plan = findPlanFile(o);
  if (!plan) return { charts: [await loadChart({ chart: o.chart, appDir: o.appDir })] };
  const paths = [...new Set(readPlanFile(plan, o.appDir).releases.map((r) => r.chart))];
  const charts: ChartInfo[] = [];
  for (const path of paths) charts.push(await loadChart({ chart: path, appDir: o.appDir }));
  return { plan, charts };
}
