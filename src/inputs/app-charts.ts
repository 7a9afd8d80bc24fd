// Every chart an app installs: the one chart (--chart, or the one under the app directory), or
// each chart of its release plan. What `check-chart` and the image build check before anything
// ships: a dependency missing from one of them would fail every airgapped install of that part.
import { loadChart, type ChartInfo } from './chart.js';
import type { AppInput } from './app-input.js';

export interface AppCharts {
  /** The release plan the charts come from, when there is one. */
  plan?: string;
  charts: ChartInfo[];
}

export async function loadAppCharts(o: { chart?: string; appDir: string }, input: AppInput): Promise<AppCharts> {
  // The vendor's CI is where a dependency off its lock's pin is fixed: refused here, warned at install.
  const strict = { strictPins: true };
  if (!input.plan) return { charts: [await loadChart({ chart: o.chart, appDir: o.appDir }, strict)] };
  const plan = input.plan.file;
  const paths = [...new Set(input.plan.releases.map((r) => r.chart))];
  const charts: ChartInfo[] = [];
  for (const path of paths) charts.push(await loadChart({ chart: path, appDir: o.appDir }, strict));
  return { plan, charts };
}
