// Every chart an app installs: the one chart (--chart, or the one under the app directory), or
// each chart of its release plan. What `check-chart` and the image build check before anything
// ships: a dependency missing from one of them would fail every airgapped install of that part.
import { loadChart, type ChartInfo } from './chart.js';
import { appChartPaths, appScope, type AppInput } from './app-input.js';

export interface AppCharts {
  /** The release plan the charts come from, when there is one. */
  plan?: string;
  charts: ChartInfo[];
}

export async function loadAppCharts(o: { chart?: string; appDir: string }, input: AppInput): Promise<AppCharts> {
  // The vendor's CI is where a dependency off its lock's pin is fixed: refused here, warned at install.
  const strict = { strictPins: true };
  // One chart: --chart, else the one under the app directory; a release plan: each chart once.
  const paths = [...new Set(appChartPaths(o, input))];
  const scope = appScope(input);
  const charts: ChartInfo[] = [];
  for (const path of paths) charts.push(await loadChart({ chart: path, appDir: o.appDir }, strict));
  return { ...(scope ? { plan: scope.file } : {}), charts };
}
