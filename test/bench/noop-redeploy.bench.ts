// Benchmark, not a test: an unchanged redeploy (KOTS re-applying the Job with the same chart and
// values) through helm-installer, against plain `helm upgrade --install` with the same chart,
// values and flags, on the local control plane with the bundled chart. Alternating runs, N each;
// prints one markdown table of medians, their ratio and the revisions each added. Asserts
// nothing. Run: npm run build && node dist/test/bench/noop-redeploy.bench.js [N]
import { execa } from 'execa';
import { ensureCluster } from '../cluster/control-plane.js';
import { createNamespace, deleteNamespace } from '../cluster/kube.js';
import { appDir, chartDir, cliPath, helm4 } from '../helpers.js';

const n = Number(process.argv[2] ?? 7) || 7;

/** The newest revision number (a count would stop at --history-max). */
async function revisions(release: string, ns: string, env: Record<string, string>): Promise<number> {
  const r = await execa(helm4, ['history', release, '-n', ns, '--max', '1', '-o', 'json'], { env });
  return (JSON.parse(r.stdout) as { revision: number }[]).at(-1)?.revision ?? 0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function main(): Promise<void> {
  const info = await ensureCluster({ log: (l) => process.stderr.write(`[cluster] ${l}\n`) });
  const env = { KUBECONFIG: info.kubeconfig };
  const ns = await createNamespace('bench-noop', { kubeconfig: info.kubeconfig });
  const ours = ['install', '--release', 'storefront', '--namespace', ns, '--timeout', '10m', '--termination-log', '/dev/null'];
  // Exactly what the installer hands helm for the same release (its --labels aside).
  const plain = ['upgrade', '--install', 'storefront', chartDir, '--namespace', ns, '--create-namespace', '--wait=watcher', '--rollback-on-failure', '--timeout', '10m', '--history-max', '5', '-f', `${appDir}/values/base.yaml`];

  await execa(process.execPath, [cliPath, ...ours], { env });
  const plainTimes: number[] = [];
  const ourTimes: number[] = [];
  let plainRevisions = 0;
  let ourRevisions = 0;
  for (let i = 0; i < n; i++) {
    let before = await revisions('storefront', ns, env);
    plainTimes.push(await timed(() => execa(helm4, plain, { env })));
    plainRevisions += (await revisions('storefront', ns, env)) - before;
    before = await revisions('storefront', ns, env);
    ourTimes.push(
      await timed(async () => {
        const r = await execa(process.execPath, [cliPath, ...ours], { env });
        if (!/unchanged release storefront/.test(r.stderr)) throw new Error(`not skipped:\n${r.stderr}`);
      }),
    );
    ourRevisions += (await revisions('storefront', ns, env)) - before;
  }
  const p = median(plainTimes);
  const o = median(ourTimes);
  process.stdout.write(
    [
      `Unchanged redeploy, bundled chart, ${n} alternating runs each (medians):`,
      '',
      '| contender | median wall time | revisions added |',
      '| --- | --- | --- |',
      `| plain helm upgrade --install | ${p.toFixed(2)} s | ${plainRevisions} |`,
      `| helm-installer install (unchanged) | ${o.toFixed(2)} s | ${ourRevisions} |`,
      `| ratio (plain / ours) | ${(p / o).toFixed(1)}x faster | |`,
      '',
    ].join('\n'),
  );
  await deleteNamespace(ns, { kubeconfig: info.kubeconfig });
}

await main();
