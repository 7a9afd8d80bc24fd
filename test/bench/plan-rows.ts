// `plan` against what helm users do without a plugin: helm's render through `kubectl diff
// --server-side` (one GET and one dry-run apply per object, one after the other), on a deployed
// release with a changed value, on the bundled chart and on a chart of 100 Deployments whose
// changed value also drops one of them (kubectl diff cannot show that deletion; plan does, and
// names its decision and who changed what by hand).
import { join } from 'node:path';
import { ensureCluster } from '../cluster/control-plane.js';
import { kubectl } from '../cluster/kube.js';
import { topUpVolumePool } from '../cluster/volume-pool.js';
import { writeFileSync } from 'node:fs';
import { kubectlPath } from '../cluster/paths.js';
import { appDir, cliPath, installerNodeArgs, helm4, tempDir } from '../helpers.js';
import { SCALE_HELM_ENV, scaleChart } from './install-rows.js';
import { benchArgv, bundledChart, generatedChart } from './commands.js';
import { alternate, timed, type Row } from './measure.js';

export async function planRows(o: { runs: number; say: (line: string) => void }): Promise<Row[]> {
  const cluster = await ensureCluster({ log: (l) => o.say(`[cluster] ${l}`), usage: 'keep' });
  const env = {
    ...process.env,
    KUBECONFIG: cluster.kubeconfig,
    HELM_INSTALLER_TERMINATION_LOG: '/dev/null',
    ...SCALE_HELM_ENV,
  } as Record<string, string>;
  const kube = { kubeconfig: cluster.kubeconfig };
  const dir = tempDir('bench-plan');
  const stamp = Date.now().toString(36);
  writeFileSync(join(dir, 'none.yaml'), '{}\n');
  const customer = join(appDir, 'examples', 'customer-values.yaml');
  // `source`: the installer's options; `values`: the same layers as helm template's -f files.
  const bundled = {
    label: 'bundled chart',
    chart: join(appDir, 'storefront'),
    source: bundledChart(),
    values: [join(appDir, 'values', 'base.yaml'), customer],
    sets: ['web.podAnnotations.bench=plan'],
  };
  const chart100 = scaleChart(dir, 100);
  const scaled = {
    label: '100 Deployments (one dropped)',
    chart: chart100,
    source: generatedChart(chart100, join(dir, 'none.yaml')),
    values: [] as string[],
    sets: ['count=99'],
  };
  const rows: Row[] = [];
  const namespaces: string[] = [];
  try {
    for (const c of [bundled, scaled]) {
      const namespace = `bench-${stamp}-plan-${rows.length}`;
      namespaces.push(namespace);
      await kubectl(['create', 'namespace', namespace], kube);
      await topUpVolumePool(cluster.kubeconfig);
      o.say(`plan, ${c.label}: installing (untimed), then ${o.runs} runs each`);
      await timed(process.execPath, [...installerNodeArgs, cliPath, ...benchArgv.install(namespace, c.source)], {
        env,
      });
      const sets = c.sets.flatMap((s) => ['--set', s]);
      const template = [
        helm4,
        'template',
        'bench',
        c.chart,
        '--namespace',
        namespace,
        ...c.values.flatMap((v) => ['-f', v]),
        ...sets,
      ]
        .map(quote)
        .join(' ');
      const diff = [kubectlPath(), 'diff', '--server-side', '--force-conflicts', '--namespace', namespace, '-f', '-']
        .map(quote)
        .join(' ');
      const measured = await alternate(
        o.runs,
        () =>
          timed(process.execPath, [...installerNodeArgs, cliPath, ...benchArgv.plan(namespace, c.source, c.sets)], {
            env,
            okExitCodes: [10],
          }),
        () => timed('sh', ['-c', `${template} | ${diff}`], { env, okExitCodes: [0, 1] }), // 0: it sees no change (a deletion)
      );
      rows.push({
        comparison: `plan, ${c.label}, a changed value`,
        ...measured,
        referenceName: '`helm template \\| kubectl diff --server-side`', // \| keeps the table's columns
        maxRatio: 1,
        goal: 'faster (and shows deletions, hooks, the decision)',
      });
    }
  } finally {
    for (const n of namespaces)
      await kubectl(['delete', 'namespace', n, '--wait=false', '--ignore-not-found'], { ...kube, reject: false });
  }
  return rows;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
