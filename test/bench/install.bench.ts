// Benchmark, not a test: helm-installer against plain helm on the local control plane. Each
// comparison alternates the two contenders run by run (so drift in the machine's load hits both),
// N runs each, and prints one markdown table of medians and ratios. It asserts nothing: these
// machines are noisy. Run: npm run bench:install [-- --runs 5 --scale 10,100,1000]
//
// "Same chart, values and flags": plain helm replays the exact `helm upgrade` argv our installer
// used (read from its debug log), with only the release namespace changed, so a flag the
// installer adds is paid by both sides.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ensureCluster } from '../cluster/control-plane.js';
import { kubectl } from '../cluster/kube.js';
import { topUpVolumePool } from '../cluster/volume-pool.js';
import { ensureDebianPackages } from '../setup/debian-packages.js';
import { appDir, cliPath, helm4, tempDir } from '../helpers.js';

const TIME = '/usr/bin/time';

interface Options {
  runs: number;
  scale: number[];
}

function parseArgs(argv: string[]): Options {
  const get = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const runs = Number(get('--runs') ?? 5);
  const scale = (get('--scale') ?? '10,100,1000').split(',').map(Number).filter((n) => n > 0);
  return { runs: runs > 0 ? runs : 5, scale };
}

/** One run: wall and CPU seconds (the process and the children it waited for) and peak RSS. */
interface Sample {
  wall: number;
  cpu: number;
  rssMb: number;
}

async function timed(cmd: string, args: string[], env: Record<string, string>): Promise<Sample & { stdout: string; stderr: string }> {
  const r = await execa(TIME, ['-f', 'BENCH %e %U %S %M', cmd, ...args], { env, reject: false, maxBuffer: 256 * 1024 * 1024 });
  const stderr = String(r.stderr);
  const line = stderr.split('\n').reverse().find((l) => l.startsWith('BENCH '));
  if (r.exitCode !== 0 || !line) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.exitCode}):\n${stderr.slice(-2000)}`);
  const [, wall, user, sys, kb] = line.split(' ').map(Number);
  return { wall: wall!, cpu: user! + sys!, rssMb: kb! / 1024, stdout: String(r.stdout), stderr };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

interface Row {
  comparison: string;
  ours: Sample[];
  reference: Sample[];
  referenceName: string;
  goal: string;
  note?: string;
}

/** Alternates `ours(i)` and `reference(i)` for i in 0..runs-1, starting with a different one each run. */
async function alternate(runs: number, ours: (i: number) => Promise<Sample>, reference: (i: number) => Promise<Sample>): Promise<{ ours: Sample[]; reference: Sample[] }> {
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

function table(rows: Row[]): string {
  const f = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
  const lines = [
    '| comparison | helm-installer (median) | reference (median) | wall ratio | CPU ratio | peak RSS ours / ref | goal |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const row of rows) {
    const [ow, rw] = [median(row.ours.map((s) => s.wall)), median(row.reference.map((s) => s.wall))];
    const [oc, rc] = [median(row.ours.map((s) => s.cpu)), median(row.reference.map((s) => s.cpu))];
    const [om, rm] = [median(row.ours.map((s) => s.rssMb)), median(row.reference.map((s) => s.rssMb))];
    lines.push(
      `| ${row.comparison}${row.note ? ` (${row.note})` : ''} | ${f(ow)} s | ${row.referenceName}: ${f(rw)} s | ${(ow / rw).toFixed(2)}x | ${(oc / rc).toFixed(2)}x | ${om.toFixed(0)} / ${rm.toFixed(0)} MB | ${row.goal} |`,
    );
  }
  return lines.join('\n');
}

/** The `helm upgrade` argv the installer ran, from its debug log (one JSON object per line). */
function upgradeArgv(log: string): string[] {
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { helm?: string; argv?: string[] };
    if (entry.helm === 'upgrade' && entry.argv) return entry.argv;
  }
  throw new Error('the installer logged no helm upgrade argv (is --log-level debug honoured?)');
}

function withNamespace(argv: string[], namespace: string): string[] {
  const out = [...argv];
  const i = out.indexOf('--namespace');
  if (i < 0) throw new Error(`no --namespace in ${argv.join(' ')}`);
  out[i + 1] = namespace;
  return out;
}

async function revisions(release: string, namespace: string, env: Record<string, string>): Promise<number> {
  const r = await execa(helm4, ['history', release, '--namespace', namespace, '-o', 'json'], { env, reject: false });
  return r.exitCode === 0 ? (JSON.parse(String(r.stdout)) as unknown[]).length : 0;
}

/** A chart of `count` Deployments, one replica each, for the scale rows. */
function scaleChart(dir: string, count: number): string {
  const chart = join(dir, `scale-${count}`);
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), `apiVersion: v2\nname: scale\nversion: 0.1.0\n`);
  writeFileSync(join(chart, 'values.yaml'), `count: ${count}\n`);
  writeFileSync(
    join(chart, 'templates', 'deployments.yaml'),
    `{{- range $i := until (int .Values.count) }}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app-{{ $i }}}
spec:
  replicas: 1
  selector: {matchLabels: {app: app-{{ $i }}}}
  template:
    metadata: {labels: {app: app-{{ $i }}}}
    spec:
      containers:
        - {name: web, image: "ghcr.io/acme/web-{{ mod $i 7 }}:1.0.{{ mod $i 5 }}", ports: [{containerPort: 8080}]}
{{- end }}
`,
  );
  return chart;
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  await ensureDebianPackages((l) => process.stderr.write(`[bench] ${l}\n`), [{ name: 'time', provides: TIME, why: 'wall time, CPU and peak RSS of each run' }]);
  const cluster = await ensureCluster({ log: (l) => process.stderr.write(`[cluster] ${l}\n`), usage: 'keep' });
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, HELM_INSTALLER_TERMINATION_LOG: '/dev/null' } as Record<string, string>;
  const node = process.execPath;
  const dir = tempDir('bench-install');
  const customer = join(appDir, 'examples', 'customer-values.yaml');
  const stamp = Date.now().toString(36);
  const namespaces: string[] = [];
  const ns = (name: string) => {
    const n = `bench-${stamp}-${name}`;
    namespaces.push(n);
    return n;
  };
  const rows: Row[] = [];
  const say = (l: string) => process.stderr.write(`[bench] ${l}\n`);

  try {
    say(`startup: helm-installer --version against helm version, ${options.runs} runs each`);
    const startup = await alternate(
      options.runs,
      () => timed(node, [cliPath, '--version'], env),
      () => timed(helm4, ['version', '--short'], env),
    );
    rows.push({ comparison: 'startup: `--version`', ...startup, referenceName: '`helm version`', goal: 'within 2x' });

    // Install of the bundled chart with the customer values, each run into a fresh namespace.
    const installOurs = (label: string, chart?: string) => async (i: number) => {
      await topUpVolumePool(cluster.kubeconfig);
      const source = chart ? ['--chart', chart, '--base-values', join(dir, 'none.yaml')] : ['--values', customer];
      const args = [cliPath, 'install', '--release', 'bench', '--namespace', ns(`ours-${label}-${i < 0 ? 'w' : i}`), '--log-level', 'debug', ...source];
      const s = await timed(node, args, env);
      lastArgv = upgradeArgv(s.stdout);
      return s;
    };
    let lastArgv: string[] = [];
    writeFileSync(join(dir, 'none.yaml'), '{}\n');
    const installPlain = (name: string) => async (i: number) => {
      await topUpVolumePool(cluster.kubeconfig);
      return timed(helm4, withNamespace(lastArgv, ns(`helm-${name}-${i}`)), env);
    };

    say(`install: the bundled chart, ${options.runs} runs each`);
    // A first run of ours (not counted) captures the argv plain helm replays.
    await installOurs('bundled')(-1);
    const install = await alternate(options.runs, installOurs('bundled'), installPlain('bundled'));
    rows.push({ comparison: 'install, bundled chart', ...install, referenceName: '`helm upgrade --install`, same argv', goal: 'at most 1.05x' });

    say(`no-op redeploy: the same install again on a deployed release, ${options.runs} runs each`);
    const oursNs = ns('noop-ours');
    const helmNs = ns('noop-helm');
    await timed(node, [cliPath, 'install', '--release', 'bench', '--namespace', oursNs, '--values', customer], env);
    await timed(helm4, withNamespace(lastArgv, helmNs), env);
    const [oursBefore, helmBefore] = [await revisions('bench', oursNs, env), await revisions('bench', helmNs, env)];
    const noop = await alternate(
      options.runs,
      () => timed(node, [cliPath, 'install', '--release', 'bench', '--namespace', oursNs, '--values', customer], env),
      () => timed(helm4, withNamespace(lastArgv, helmNs), env),
    );
    const [oursAdded, helmAdded] = [(await revisions('bench', oursNs, env)) - oursBefore, (await revisions('bench', helmNs, env)) - helmBefore];
    rows.push({
      comparison: 'no-op redeploy',
      ...noop,
      referenceName: '`helm upgrade`, same argv',
      goal: 'at least 10x faster, 0 new revisions',
      note: `new revisions: ours ${oursAdded}, helm ${helmAdded} (history-max caps what is kept)`,
    });

    for (const count of options.scale) {
      say(`scale: a chart of ${count} Deployments, ${options.runs} runs each`);
      const chart = scaleChart(dir, count);
      await installOurs(`scale${count}`, chart)(-1);
      const scaled = await alternate(options.runs, installOurs(`scale${count}`, chart), installPlain(`scale${count}`));
      rows.push({ comparison: `install, ${count} Deployments`, ...scaled, referenceName: '`helm upgrade --install`, same argv', goal: 'at most 1.05x' });
    }
  } finally {
    say(`deleting ${namespaces.length} namespaces`);
    for (const n of [...new Set(namespaces)]) await kubectl(['delete', 'namespace', n, '--wait=false', '--ignore-not-found'], { kubeconfig: cluster.kubeconfig, reject: false });
  }

  process.stdout.write(`\n${table(rows)}\n\n`);
  process.stdout.write(`${options.runs} runs per contender, alternating; medians. Wall and CPU from GNU time (CPU includes helm's).\n`);
}

await main();
