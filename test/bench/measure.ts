// What every comparison of `npm run bench` shares: one run measured by GNU time (wall, CPU of the
// process and the children it waited for, peak RSS), contenders alternated run by run, medians.
import { execa } from 'execa';

export const TIME = '/usr/bin/time';

export interface Sample {
  wall: number;
  cpu: number;
  rssMb: number;
}

export interface RunOptions {
  env?: Record<string, string>;
  inputFile?: string;
  outputFile?: string;
  /** Exit codes that are answers, not failures (`plan`'s 10, `kubectl diff`'s 1: "there are changes"). */
  okExitCodes?: number[];
}

export async function timed(
  cmd: string,
  args: string[],
  o: RunOptions = {},
): Promise<Sample & { stdout: string; stderr: string; startedAt: number }> {
  const startedAt = Date.now();
  const started = process.hrtime.bigint();
  const r = await execa(TIME, ['-f', 'BENCH %U %S %M', cmd, ...args], {
    env: o.env,
    inputFile: o.inputFile,
    stdout: o.outputFile ? { file: o.outputFile } : 'pipe',
    reject: false,
    maxBuffer: 256 * 1024 * 1024,
  });
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const stderr = String(r.stderr);
  const line = stderr
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('BENCH '));
  if (!(o.okExitCodes ?? [0]).includes(r.exitCode ?? -1) || !line)
    throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.exitCode}):\n${stderr.slice(-2000)}`);
  const [, user, sys, kb] = line.split(' ').map(Number);
  return { wall, cpu: user! + sys!, rssMb: kb! / 1024, stdout: String(r.stdout ?? ''), stderr, startedAt };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs ours(i) and reference(i) for i in 0..runs-1, the other one first every second run. */
export async function alternate(
  runs: number,
  ours: (i: number) => Promise<Sample>,
  reference: (i: number) => Promise<Sample>,
): Promise<{ ours: Sample[]; reference: Sample[] }> {
  const o: Sample[] = [];
  const r: Sample[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      o.push(await ours(i));
      r.push(await reference(i));
    } else {
      r.push(await reference(i));
      o.push(await ours(i));
    }
  }
  return { ours: o, reference: r };
}

/** One line of the table: a comparison, both contenders' samples, and the issue's goal. */
export interface Row {
  comparison: string;
  referenceName: string;
  ours: Sample[];
  reference: Sample[];
  /** Goal on the wall-time ratio ours / reference (e.g. 1.05; 0.1 for "10x faster"). A row with no bound at all reports, its "met" is "-". */
  maxRatio?: number;
  /** Goal on the wall time ours adds to the reference's, in seconds (the install overhead). */
  maxAddedSeconds?: number;
  /** Goal on our own wall time, in seconds. */
  maxSeconds?: number;
  goal: string;
  /** A bound on our peak RSS in MB (post-render: 3x its input). */
  maxRssMb?: number;
  note?: string;
  /** Where ours' time goes (phases.ts), printed under the table: a goal not met says why. */
  explain?: string;
}

export function markdownTable(rows: Row[]): string {
  const f = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
  const lines = [
    '| comparison | helm-installer | reference | wall ours / ref | added | CPU ours / ref | peak RSS ours / ref | goal | met |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const m = (xs: Sample[], k: keyof Sample) => median(xs.map((s) => s[k]));
    const [ow, rw, oc, rc, om, rm] = [
      m(row.ours, 'wall'),
      m(row.reference, 'wall'),
      m(row.ours, 'cpu'),
      m(row.reference, 'cpu'),
      m(row.ours, 'rssMb'),
      m(row.reference, 'rssMb'),
    ];
    const ratio = ow / rw;
    const added = ow - rw;
    const bounded = [row.maxRatio, row.maxAddedSeconds, row.maxSeconds, row.maxRssMb].some((b) => b !== undefined);
    const met =
      ratio <= (row.maxRatio ?? Infinity) &&
      (row.maxAddedSeconds === undefined || added <= row.maxAddedSeconds) &&
      (row.maxSeconds === undefined || ow <= row.maxSeconds) &&
      (row.maxRssMb === undefined || om <= row.maxRssMb);
    lines.push(
      `| ${row.comparison}${row.note ? ` (${row.note})` : ''} | ${f(ow)} s | ${row.referenceName}: ${f(rw)} s | ${ratio.toFixed(2)}x | ${added >= 0 ? '+' : ''}${added.toFixed(2)} s | ${rc > 0 ? (oc / rc).toFixed(2) : '-'}x | ${om.toFixed(0)} / ${rm > 0 ? rm.toFixed(0) : '-'} MB | ${row.goal} | ${!bounded ? '-' : met ? 'yes' : '**no**'} |`,
    );
  }
  const explained = rows.filter((r) => r.explain).map((r) => `- ${r.comparison}: ${r.explain}`);
  return [...lines, ...(explained.length > 0 ? ['', ...explained] : [])].join('\n');
}
