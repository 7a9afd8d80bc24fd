// Benchmark, not a test: post-render throughput and peak RSS on generated manifests of about 1,
// 10 and 50 MB, against plain helm on the same chart. Prints figures and ratios; asserts nothing
// (these machines are noisy). Run: npm run bench [-- sizes in MB, e.g. 1 10].
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { preparePostRenderer } from '../../src/images/post-renderer-setup.js';
import { parseRegistryAddress } from '../../src/images/image-reference.js';
import { helm4, repoRoot, tempDir } from '../helpers.js';

const TIME = '/usr/bin/time';
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const targetsMb = sizes.length > 0 ? sizes : [1, 10, 50];

// One Deployment per item, with the things the rewriter must keep: comments, a block scalar,
// an init container, several containers, quoted YAML-1.1 look-alikes.
const TEMPLATE = `{{- range $i := until (int .Values.count) }}
---
# item {{ $i }}: a comment the rewriter keeps
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{{ $i }}
  labels: {app: app-{{ $i }}, tier: "on"}
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

function makeChart(dir: string, count: number): string {
  const chart = join(dir, 'bench');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: bench\nversion: 0.1.0\n');
  writeFileSync(join(chart, 'values.yaml'), `count: ${count}\n`);
  writeFileSync(join(chart, 'templates', 'deployments.yaml'), TEMPLATE);
  return chart;
}

interface Measured {
  seconds: number;
  rssMb: number;
}

/** GNU time's elapsed seconds and maximum resident set size of the command. */
async function measure(cmd: string, args: string[], opts: { env?: Record<string, string>; inputFile?: string; outputFile?: string }): Promise<Measured> {
  const r = await execa(TIME, ['-f', 'BENCH %e %M', cmd, ...args], {
    env: opts.env,
    inputFile: opts.inputFile,
    stdout: opts.outputFile ? { file: opts.outputFile } : 'ignore',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const line = String(r.stderr).split('\n').find((l) => l.startsWith('BENCH '))!;
  const [, seconds, kb] = line.split(' ');
  return { seconds: Number(seconds), rssMb: Number(kb) / 1024 };
}

async function main(): Promise<void> {
  const dir = tempDir('bench');
  const registry = parseRegistryAddress('registry.local:5000/acme');
  const pr = await preparePostRenderer({ workDir: dir, plan: { registry, extraPaths: [], imagePullSecret: 'regcred' }, helmMajor: 4 });
  // A no-op post-renderer (cat) separates helm's own cost of any post-renderer (helm 4 re-reads
  // and re-serialises its output) from ours.
  const noopPlugins = join(dir, 'noop-plugins');
  mkdirSync(join(noopPlugins, 'noop'), { recursive: true });
  writeFileSync(
    join(noopPlugins, 'noop', 'plugin.yaml'),
    'apiVersion: v1\nname: noop\nversion: 1.0.0\ntype: postrenderer/v1\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n    - command: /bin/cat\n',
  );
  const node = process.execPath;
  const script = join(repoRoot, 'dist', 'src', 'post-render.js');
  const planFile = pr.planFile;
  const rows: string[][] = [];

  for (const mb of targetsMb) {
    // About 925 bytes per item once rendered.
    const count = Math.max(1, Math.round((mb * 1024 * 1024) / 925));
    const chart = makeChart(join(dir, `c${mb}`), count);
    const rendered = join(dir, `rendered-${mb}.yaml`);
    const plain = await measure(helm4, ['template', 'bench', chart], { outputFile: rendered });
    const bytes = statSync(rendered).size;
    const noop = await measure(helm4, ['template', 'bench', chart, '--post-renderer', 'noop'], { env: { HELM_PLUGINS: noopPlugins }, outputFile: join(dir, 'noop.yaml') });
    const withPr = await measure(helm4, ['template', 'bench', chart, ...pr.helmArgs], { env: pr.env, outputFile: join(dir, 'with.yaml') });
    const alone = await measure(node, [script, '--plan', planFile], { inputFile: rendered, outputFile: join(dir, 'alone.yaml') });
    const sizeMb = bytes / 1024 / 1024;
    rows.push([
      `${sizeMb.toFixed(1)} MB (${count} Deployments)`,
      `${plain.seconds.toFixed(2)}s / ${plain.rssMb.toFixed(0)} MB`,
      `${noop.seconds.toFixed(2)}s / ${noop.rssMb.toFixed(0)} MB`,
      `${withPr.seconds.toFixed(2)}s / ${withPr.rssMb.toFixed(0)} MB`,
      `${(withPr.seconds / plain.seconds).toFixed(2)}x / ${(withPr.seconds / noop.seconds).toFixed(2)}x`,
      `${alone.seconds.toFixed(2)}s`,
      `${(sizeMb / alone.seconds).toFixed(1)} MB/s`,
      `${alone.rssMb.toFixed(0)} MB (${(alone.rssMb / sizeMb).toFixed(1)}x input)`,
    ]);
    process.stderr.write(`done ${mb} MB\n`);
  }
  const head = ['manifests', 'helm template (time / peak RSS)', 'helm + no-op post-renderer', 'helm + our post-renderer', 'time ratio vs plain / vs no-op', 'post-render alone', 'throughput', 'post-render peak RSS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  process.stdout.write(`${[fmt(head), fmt(widths.map((w) => '-'.repeat(w))), ...rows.map(fmt)].join('\n')}\n`);
}

await main();
