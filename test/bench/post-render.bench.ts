// Benchmark, not a test: asserts nothing (these machines are noisy); prints markdown tables.
//
// 1. helm: plain `helm template` against the same with a no-op post-renderer and with ours.
// 2. post-render against mikefarah's yq doing the same rewrite (every container image of every pod
//    template to `<registry>/<last path component>`, plus an imagePullSecret) on the very stream
//    helm 4 hands a post-renderer (captured with a recording plugin), at about 1, 10 and 50 MB.
//    The contenders alternate, N runs each; medians of wall time and peak RSS.
//
// Run: npm run bench [-- [sizes in MB ...] [--runs N] [--corpus file.yaml] [--no-helm]]
// --corpus: manifests to repeat up to each size instead of the generated chart (e.g. public
// charts rendered by helm 4 and concatenated; never commit those).
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { POST_RENDER_NODE_ARGS, preparePostRenderer } from '../../src/images/post-renderer-setup.js';
import { parseRegistryAddress } from '../../src/images/image-reference.js';
import { cacheRoot, buildScriptPath } from '../cluster/paths.js';
import { helm4, repoRoot, tempDir } from '../helpers.js';

const TIME = '/usr/bin/time';
const REGISTRY = 'registry.local:5000/acme';
const PULL_SECRET = 'regcred';

interface Options {
  sizes: number[];
  runs: number;
  corpus?: string;
  helmTable: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { sizes: [], runs: 5, helmTable: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--runs') o.runs = Math.max(1, Number(argv[++i]));
    else if (a === '--corpus') o.corpus = argv[++i];
    else if (a === '--no-helm') o.helmTable = false;
    else if (Number(a) > 0) o.sizes.push(Number(a));
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.sizes.length === 0) o.sizes = [1, 10, 50];
  return o;
}

// One Deployment per item, with the things the rewriter must keep: comments, a block scalar,
// an init container, several containers, quoted YAML-1.1 look-alikes, and a long multi-line
// single-quoted string like alert rules carry (helm 4 writes its closing quote at column 0).
const TEMPLATE = `{{- range $i := until (int .Values.count) }}
---
# item {{ $i }}: a comment the rewriter keeps
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{{ $i }}
  labels: {app: app-{{ $i }}, tier: "on"}
  annotations:
    description: 'Deployment {{ $i }} serves: the "web" tier # not a comment.

      It is scaled by the operator, it''s fine.

      '
spec:
  replicas: 1
  selector: {matchLabels: {app: app-{{ $i }}}}
  template:
    metadata:
      labels: {app: app-{{ $i }}}
      annotations:
        note: |
          line one of a block scalar
          line two, 0777 and 12:30 stay as they are
    spec:
      initContainers:
        - name: wait
          image: busybox:1.36.1
          command: ["sh", "-c", "until nc -z db 5432; do sleep 1; done"]
      containers:
        - name: web
          image: ghcr.io/acme/web-{{ mod $i 7 }}:1.{{ mod $i 5 }}.0
          env: [{name: MODE, value: "yes"}, {name: WINDOW, value: "12:30"}]
          ports: [{containerPort: 8080}]
        - name: sidecar
          image: quay.io/acme/sidecar@sha256:{{ printf "%064d" 42 }}
{{- end }}
`;
const BYTES_PER_ITEM = 1090; // rendered by helm 4, measured

// yq's version of our rewrite: the same kinds, the same pod spec paths, the same KOTS name.
const POD_SPEC_EDIT = `(
  (.containers[], .initContainers[], .ephemeralContainers[]) | select(has("image")) | .image
) |= "${REGISTRY}/" + sub("^.*/", "") | .imagePullSecrets += [{"name": "${PULL_SECRET}"}]`;
const YQ_EXPRESSION = [
  `with(select(.kind == "Deployment" or .kind == "StatefulSet" or .kind == "DaemonSet" or .kind == "ReplicaSet" or .kind == "Job" or .kind == "ReplicationController"); .spec.template.spec |= (${POD_SPEC_EDIT}))`,
  `with(select(.kind == "CronJob"); .spec.jobTemplate.spec.template.spec |= (${POD_SPEC_EDIT}))`,
  `with(select(.kind == "Pod"); .spec |= (${POD_SPEC_EDIT}))`,
].join(' | ');

function makeChart(dir: string, count: number): string {
  const chart = join(dir, 'bench');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: bench\nversion: 0.1.0\n');
  writeFileSync(join(chart, 'values.yaml'), `count: ${count}\n`);
  writeFileSync(join(chart, 'templates', 'deployments.yaml'), TEMPLATE);
  return chart;
}

/** A postrenderer/v1 plugin running `command` (helm 4 finds plugins by name under HELM_PLUGINS). */
function plugin(dir: string, name: string, command: string): string {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    join(dir, name, 'plugin.yaml'),
    `apiVersion: v1\nname: ${name}\nversion: 1.0.0\ntype: postrenderer/v1\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: ${command}\n`,
  );
  return dir;
}

interface Measured {
  seconds: number;
  rssMb: number;
}

/** Wall time and GNU time's maximum resident set size of the command. */
async function measure(cmd: string, args: string[], opts: { env?: Record<string, string>; inputFile?: string; outputFile?: string }): Promise<Measured> {
  const started = process.hrtime.bigint();
  const r = await execa(TIME, ['-f', 'BENCH %M', cmd, ...args], {
    env: opts.env,
    inputFile: opts.inputFile,
    stdout: opts.outputFile ? { file: opts.outputFile } : 'ignore',
    reject: false,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.exitCode !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.exitCode}): ${String(r.stderr).slice(-2000)}`);
  const line = String(r.stderr).split('\n').find((l) => l.startsWith('BENCH '))!;
  return { seconds, rssMb: Number(line.split(' ')[1]) / 1024 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt)].join('\n');
}

async function yqBinary(): Promise<string> {
  const script = readFileSync(buildScriptPath(), 'utf8');
  const version = process.env.YQ_VERSION || /^YQ_VERSION="\$\{YQ_VERSION:-([^}]+)\}"/m.exec(script)?.[1];
  const bin = join(cacheRoot(), 'bin', `yq-${version}`);
  if (!existsSync(bin)) {
    process.stderr.write(`building yq ${version} (once, cached in ${bin})\n`);
    await execa('bash', [buildScriptPath(), 'yq'], { stdio: 'inherit' });
  }
  return bin;
}

/** The stream helm 4 hands a post-renderer, for the chart, captured by a recording plugin. */
async function helm4Stream(dir: string, chart: string, out: string): Promise<void> {
  const recorder = join(dir, 'record.sh');
  writeFileSync(recorder, `#!/bin/sh\nexec tee "$BENCH_RECORD"\n`, { mode: 0o755 });
  const plugins = plugin(join(dir, 'record-plugins'), 'record', recorder);
  await execa(helm4, ['template', 'bench', chart, '--post-renderer', 'record'], { env: { HELM_PLUGINS: plugins, BENCH_RECORD: out }, stdout: 'ignore' });
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const dir = tempDir('bench');
  const yq = await yqBinary();
  const pr = await preparePostRenderer({
    workDir: dir,
    plan: { registry: parseRegistryAddress(REGISTRY), extraPaths: [], imagePullSecret: PULL_SECRET },
    helmMajor: 4,
  });
  const noopPlugins = plugin(join(dir, 'noop-plugins'), 'noop', '/bin/cat');
  const node = process.execPath;
  const script = join(repoRoot, 'dist', 'src', 'post-render.js');
  const helmRows: string[][] = [];
  const rows: string[][] = [];
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

  for (const mb of o.sizes) {
    const input = join(dir, `input-${mb}.yaml`);
    let label: string;
    if (o.corpus) {
      const unit = readFileSync(o.corpus, 'utf8');
      const copies = Math.max(1, Math.round((mb * 1024 * 1024) / Buffer.byteLength(unit)));
      writeFileSync(input, Array.from({ length: copies }, () => (unit.endsWith('\n') ? unit : `${unit}\n`)).join('---\n'));
      label = `${copies} x corpus`;
    } else {
      const count = Math.max(1, Math.round((mb * 1024 * 1024) / BYTES_PER_ITEM));
      const chart = makeChart(join(dir, `c${mb}`), count);
      await helm4Stream(dir, chart, input);
      label = `${count} Deployments`;
      if (o.helmTable) {
        const plain = await measure(helm4, ['template', 'bench', chart], { outputFile: join(dir, 'plain.yaml') });
        const noop = await measure(helm4, ['template', 'bench', chart, '--post-renderer', 'noop'], { env: { HELM_PLUGINS: noopPlugins }, outputFile: join(dir, 'noop.yaml') });
        const withPr = await measure(helm4, ['template', 'bench', chart, ...pr.helmArgs], { env: pr.env, outputFile: join(dir, 'with.yaml') });
        helmRows.push([
          `${mb} MB (${label})`,
          `${plain.seconds.toFixed(2)}s / ${plain.rssMb.toFixed(0)} MB`,
          `${noop.seconds.toFixed(2)}s / ${noop.rssMb.toFixed(0)} MB`,
          `${withPr.seconds.toFixed(2)}s / ${withPr.rssMb.toFixed(0)} MB`,
          `${(withPr.seconds / plain.seconds).toFixed(2)}x / ${(withPr.seconds / noop.seconds).toFixed(2)}x`,
        ]);
      }
    }
    const sizeMb = statSync(input).size / 1024 / 1024;
    const ours: Measured[] = [];
    const theirs: Measured[] = [];
    const ourOut = join(dir, 'ours.yaml');
    const yqOut = join(dir, 'yq.yaml');
    for (let run = 0; run < o.runs; run++) {
      // Alternate who goes first, so neither always gets the warm cache.
      const pair = [
        async () => ours.push(await measure(node, [...POST_RENDER_NODE_ARGS, script, '--plan', pr.planFile], { inputFile: input, outputFile: ourOut })),
        async () => theirs.push(await measure(yq, [YQ_EXPRESSION], { inputFile: input, outputFile: yqOut })),
      ];
      if (run % 2) pair.reverse();
      for (const step of pair) await step();
    }
    // Same rewrite: the same number of rewritten references in both outputs.
    const count = (file: string) => readFileSync(file, 'utf8').split(`${REGISTRY}/`).length - 1;
    const same = count(ourOut) === count(yqOut) ? '' : ` (rewrites differ: ours ${count(ourOut)}, yq ${count(yqOut)})`;
    const t = { ours: median(ours.map((m) => m.seconds)), yq: median(theirs.map((m) => m.seconds)) };
    const r = { ours: median(ours.map((m) => m.rssMb)), yq: median(theirs.map((m) => m.rssMb)) };
    rows.push([
      `${sizeMb.toFixed(1)} MB (${label})${same}`,
      `${(sizeMb / t.ours).toFixed(1)} MB/s (${t.ours.toFixed(2)}s)`,
      `${(sizeMb / t.yq).toFixed(1)} MB/s (${t.yq.toFixed(2)}s)`,
      `${(t.yq / t.ours).toFixed(2)}x`,
      `${r.ours.toFixed(0)} MB (${(r.ours / sizeMb).toFixed(1)}x input)`,
      `${r.yq.toFixed(0)} MB (${(r.yq / sizeMb).toFixed(1)}x input)`,
    ]);
    process.stderr.write(`done ${mb} MB\n`);
  }

  if (helmRows.length > 0) {
    process.stdout.write(
      `${table(['manifests', 'helm template (time / peak RSS)', 'helm + no-op post-renderer', 'helm + our post-renderer', 'time ratio vs plain / vs no-op'], helmRows)}\n\n`,
    );
  }
  process.stdout.write(
    `Post-render vs yq ${(await execa(yq, ['--version'])).stdout.replace(/.*version /, '')}, same rewrite, median of ${o.runs} alternating runs each\n\n` +
      `${table(['input (stream helm 4 hands over)', 'ours: throughput', 'yq: throughput', 'speed vs yq', 'ours: peak RSS', 'yq: peak RSS'], rows)}\n`,
  );
}

await main();
