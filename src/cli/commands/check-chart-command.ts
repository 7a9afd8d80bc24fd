// `helm-installer check-chart`: the chart checks every command makes when it reads the chart
// (archive safety, YAML, vendored dependencies), alone and with no helm and no cluster, for a
// vendor's CI: it fails (exit 3) on a dependency that is not in charts/ at the version Chart.lock
// pins, before an image is built that an airgapped install would refuse (or, for one off the pin
// but within its range, that `install` would only warn about: the bookkeeping is the CI's).
import { defineCommand } from '../command.js';
import { commonOptionTable } from '../../options/config.js';
import { createBaseContext } from '../../run/base-context.js';
import { loadAppCharts } from '../../inputs/app-charts.js';
import { resolveInput } from '../../inputs/app-input.js';
import { describeDependency } from '../../inputs/chart-dependencies.js';

const { chart, appDir, releasesFile, logFormat, logLevel } = commonOptionTable;

export const checkChartDefinition = defineCommand({
  name: 'check-chart',
  description:
    'check the chart as every command reads it, every dependency vendored in charts/ at the version Chart.lock pins (for CI; no helm, no cluster)',
  options: { chart, appDir, releasesFile, logFormat, logLevel },
  run: async (o, state) => {
    // The logger only carries warnings (an unknown HELM_INSTALLER_* variable) to stderr.
    createBaseContext(o, 2, state);
    state.progress.action = 'checking the chart';
    // With a release plan, every chart it lists (each once), in the plan's order.
    const { plan, charts } = await loadAppCharts(o, resolveInput(o, state.progress));
    const lines = plan ? [`release plan ${plan}: ${charts.length} chart(s)`] : [];
    for (const loaded of charts) {
      lines.push(
        `chart ${loaded.path}: ${loaded.name} ${loaded.version}`,
        ...loaded.dependencies.map((d) => `  ${describeDependency(d)}`),
      );
      const count = loaded.dependencies.length;
      lines.push(count === 0 ? 'no dependencies' : `every dependency vendored (${count} checked)`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
});
