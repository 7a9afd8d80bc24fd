// Benchmark, not a test: asserts nothing (these machines are noisy). Every comparison of issue 10
// in one run, each alternating its two contenders run by run (so drift in the machine's load hits
// both), N runs each, and ONE markdown table of medians and ratios, captioned with the date, the
// machine and its load average before and after.
//
// Run: npm run bench [-- --runs N] [--scale 10,100,1000] [--sizes 1,10,50] [--corpus file.yaml]
//      [--only install|scale|plan|releases|export|crds|post-render]   (scale: only the rows of --scale)
import { cpus, loadavg, totalmem } from 'node:os';
import { ensureDebianPackages } from '../setup/debian-packages.js';
import { installRows } from './install-rows.js';
import { markdownTable, TIME, type Row } from './measure.js';
import { planRows } from './plan-rows.js';
import { releasePlanRows } from './release-plan-rows.js';
import { exportRows } from './export-rows.js';
import { crdRows } from './crd-rows.js';
import { postRenderRows, yqVersion } from './post-render-rows.js';

interface Options {
  runs: number;
  scale: number[];
  sizes: number[];
  corpus?: string;
  only?: 'install' | 'scale' | 'post-render' | 'plan' | 'releases' | 'export' | 'crds';
}

function parseArgs(argv: string[]): Options {
  const get = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const list = (v: string) =>
    v
      .split(',')
      .map(Number)
      .filter((n) => n > 0);
  const only = get('--only');
  const parts = ['install', 'scale', 'post-render', 'plan', 'releases', 'export', 'crds'] as const;
  if (only !== undefined && !(parts as readonly string[]).includes(only))
    throw new Error(`--only takes ${parts.join(', ')}, not ${only}`);
  return {
    runs: Math.max(5, Number(get('--runs') ?? 5) || 5),
    scale: list(get('--scale') ?? '10,100,1000'),
    sizes: list(get('--sizes') ?? '1,10,50'),
    corpus: get('--corpus'),
    only: only as Options['only'],
  };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const say = (l: string) => process.stderr.write(`[bench] ${l}\n`);
  await ensureDebianPackages(say, [{ name: 'time', provides: TIME, why: 'wall time, CPU and peak RSS of each run' }]);
  const loadBefore = loadavg()[0]!;
  const started = new Date();
  const rows: Row[] = [];
  if (o.only === undefined || o.only === 'install' || o.only === 'scale')
    rows.push(...(await installRows({ runs: o.runs, scale: o.scale, scaleOnly: o.only === 'scale', say })));
  if (o.only === undefined || o.only === 'plan') rows.push(...(await planRows({ runs: o.runs, say })));
  if (o.only === undefined || o.only === 'releases') rows.push(...(await releasePlanRows({ runs: o.runs, say })));
  if (o.only === undefined || o.only === 'export') rows.push(...(await exportRows({ runs: o.runs, say })));
  if (o.only === undefined || o.only === 'crds') rows.push(...(await crdRows({ runs: o.runs, say })));
  if (o.only === undefined || o.only === 'post-render')
    rows.push(...(await postRenderRows({ runs: o.runs, sizes: o.sizes, corpus: o.corpus, say })));
  const loadAfter = loadavg()[0]!;
  const minutes = (Date.now() - started.getTime()) / 60_000;
  say(`the whole bench took ${minutes.toFixed(1)} min`);
  process.stdout.write(
    [
      '',
      `Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC (${minutes.toFixed(0)} min) on ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; ` +
        `load average ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after. Median of ${o.runs} alternating runs per contender; ` +
        `wall ratio is ours / reference (below 1 is faster); CPU includes helm's` +
        (o.only !== undefined && o.only !== 'post-render' ? '.' : `; yq ${await yqVersion()}.`),
      '',
      markdownTable(rows),
      '',
    ].join('\n'),
  );
}

await main();
