// Post-render against mikefarah's yq doing the same rewrite (every container image of every pod
// template to `<registry>/<last path component>`, plus an imagePullSecret) on the very stream
// helm 4 hands a post-renderer (captured with a recording plugin), at about 1, 10 and 50 MB.
// --corpus repeats a file of your own up to each size instead, or takes its first documents for a
// size below its own (e.g. public charts rendered by helm 4 and concatenated; never commit those).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { splitManifestStream } from '../../src/rendered/manifest-stream.js';
import { cacheRoot, buildScriptPath } from '../cluster/paths.js';
import { helm4, installerNodeArgs, repoRoot, tempDir } from '../helpers.js';
import { alternate, median, timed, type Row, type Sample } from './measure.js';
import type { HostStats } from './post-render-host.js';

const REGISTRY = 'registry.local:5000/acme';
const PULL_SECRET = 'regcred';

export interface PostRenderBenchOptions {
  sizes: number[];
  runs: number;
  corpus?: string;
  say: (line: string) => void;
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
  await execa(helm4, ['template', 'bench', chart, '--post-renderer', 'record'], {
    env: { HELM_PLUGINS: plugins, BENCH_RECORD: out },
    stdout: 'ignore',
  });
}

export async function yqVersion(): Promise<string> {
  return (await execa(await yqBinary(), ['--version'])).stdout.replace(/.*version /, '');
}

export async function postRenderRows(o: PostRenderBenchOptions): Promise<Row[]> {
  const dir = tempDir('bench-post-render');
  const yq = await yqBinary();
  // The memory goal is 3x the input on top of what Node itself takes: a bare `node -e 0` with the
  // installer's flags, measured here, in the same run. The post-render is no Node process of its
  // own any more: what it takes is the sh shim plus what the rewrite adds to the installer.
  const bare: number[] = [];
  for (let i = 0; i < o.runs; i++) bare.push((await timed(process.execPath, [...installerNodeArgs, '-e', '0'])).rssMb);
  const nodeMb = median(bare);
  o.say(`post-render: bare Node's peak RSS ${nodeMb.toFixed(0)} MB`);
  const rows: Row[] = [];
  for (const mb of o.sizes) {
    const input = join(dir, `input-${mb}.yaml`);
    let label: string;
    if (o.corpus) {
      const unit = readFileSync(o.corpus, 'utf8');
      const whole = unit.endsWith('\n') ? unit : `${unit}\n`;
      const target = mb * 1024 * 1024;
      if (Buffer.byteLength(whole) > target * 1.5) {
        // A size below the corpus's own: its documents in order, each that still fits the size.
        const pieces = splitManifestStream(whole);
        const taken: string[] = [];
        let bytes = 0;
        for (const piece of pieces) {
          const size = Buffer.byteLength(piece.text);
          if (bytes + size > target) continue;
          taken.push(piece.text);
          bytes += size;
        }
        writeFileSync(input, taken.join(''));
        label = `${taken.length} of ${pieces.length} corpus documents`;
      } else {
        const copies = Math.max(1, Math.round(target / Buffer.byteLength(whole)));
        writeFileSync(input, Array.from({ length: copies }, () => whole).join('---\n'));
        label = `${copies} x corpus`;
      }
    } else {
      const count = Math.max(1, Math.round((mb * 1024 * 1024) / BYTES_PER_ITEM));
      await helm4Stream(dir, makeChart(join(dir, `c${mb}`), count), input);
      label = `${count} Deployments`;
    }
    const sizeMb = statSync(input).size / 1024 / 1024;
    o.say(`post-render: ${sizeMb.toFixed(1)} MB against yq, ${o.runs} runs each`);
    const ourOut = join(dir, 'ours.yaml');
    const yqOut = join(dir, 'yq.yaml');
    const before: number[] = [];
    const samples = await alternate(
      o.runs,
      async () => {
        const { sample, beforeMb } = await hostedPostRender(dir, input, ourOut, true);
        before.push(beforeMb);
        return sample;
      },
      () => timed(yq, [YQ_EXPRESSION], { inputFile: input, outputFile: yqOut }),
    );
    // The same request as a process's very first rewrite: what it costs when nothing ran before.
    const cold: number[] = [];
    for (let i = 0; i < Math.min(o.runs, 3); i++)
      cold.push((await hostedPostRender(dir, input, join(dir, 'cold.yaml'), false)).sample.rssMb);
    // Same rewrite: the same number of rewritten references in both outputs.
    const count = (file: string) => readFileSync(file, 'utf8').split(`${REGISTRY}/`).length - 1;
    const differ = count(ourOut) === count(yqOut) ? '' : `; rewrites differ: ours ${count(ourOut)}, yq ${count(yqOut)}`;
    const t = median(samples.ours.map((s) => s.wall));
    const rss = median(samples.ours.map((s) => s.rssMb));
    rows.push({
      comparison: `post-render ${sizeMb.toFixed(1)} MB`,
      referenceName: 'yq',
      ...samples,
      maxRatio: 1,
      maxRssMb: nodeMb + 3 * sizeMb,
      goal: `faster than yq (below 1x), peak RSS it takes at most Node's own (${nodeMb.toFixed(0)} MB) + 3x input`,
      note: `${label}, ${(sizeMb / t).toFixed(1)} MB/s, shim and rewrite take ${rss.toFixed(1)} MB (${(rss / sizeMb).toFixed(1)}x input) beside an installer of ${median(before).toFixed(0)} MB, ${median(cold).toFixed(1)} MB as a process's first rewrite${differ}`,
    });
  }
  return rows;
}

/**
 * One post-render as `helm upgrade` gets it from the installer: helm's side is the sh shim (timed
 * by GNU time: the wall time helm waits, the shim's CPU and peak RSS), the rewrite runs in a
 * process started as the installer is (its Node flags), fresh for every run. `asInstall`: that
 * process first does on the same stream what `install --registry` does in-process before helm
 * upgrade (the image plan's read and the render check's rewrite, which compile the code and grow
 * the heap) and holds the rendered chart as install does; otherwise the request is its first
 * rewrite. Ours is what a post-render adds to the Job: the shim's peak RSS plus the host's growth
 * while serving it, and both their CPU. yq's is its whole process, what a yq post-renderer adds.
 */
async function hostedPostRender(
  dir: string,
  input: string,
  output: string,
  asInstall: boolean,
): Promise<{ sample: Sample; beforeMb: number }> {
  const work = mkdtempSync(join(dir, 'host-'));
  const hostArgs = [
    join(repoRoot, 'dist', 'test', 'bench', 'post-render-host.js'),
    work,
    REGISTRY,
    PULL_SECRET,
    ...(asInstall ? [input] : []),
  ];
  const host = execa(process.execPath, [...installerNodeArgs, ...hostArgs], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const shim = await new Promise<string>((resolve, reject) => {
    let seen = '';
    host.stdout.on('data', (d: Buffer) => {
      seen += d.toString();
      const ready = /^READY (.+)$/m.exec(seen);
      if (ready) resolve(ready[1]!);
    });
    host.catch(reject);
  });
  try {
    const shimRun = await timed('/bin/sh', [shim], { inputFile: input, outputFile: output });
    const [stats] = readFileSync(join(work, 'host-stats.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as HostStats);
    if (!stats) throw new Error('the post-render host served no request');
    return {
      sample: { wall: shimRun.wall, cpu: shimRun.cpu + stats.cpu, rssMb: shimRun.rssMb + stats.addedMb },
      beforeMb: stats.beforeMb,
    };
  } finally {
    host.stdin.end();
    await host;
  }
}
