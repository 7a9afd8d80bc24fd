// The comparisons against plain helm on the local control plane: startup, an install of the
// bundled chart, an unchanged redeploy, and installs of charts of 10, 100 and 1000 Deployments.
// "Same chart, values and flags": plain helm replays the exact `helm upgrade` argv our installer
// ran (read from its debug log), only the namespace changed, so a flag the installer adds is paid
// by both. Every install goes into a namespace made beforehand, as the Job finds its own.
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { ensureCluster } from '../cluster/control-plane.js';
import { kubectl } from '../cluster/kube.js';
import { topUpVolumePool } from '../cluster/volume-pool.js';
import { cliPath, installerNodeArgs, helm4, tempDir } from '../helpers.js';
import { benchArgv, bundledChart, generatedChart } from './commands.js';
import { alternate, markdownTable, median, timed, type Row } from './measure.js';
import { describePhases, phasesOf, type Phases } from './phases.js';

export interface InstallBenchOptions {
  runs: number;
  scale: number[];
  /** Only the scale rows (no startup, bundled chart or no-op rows). */
  scaleOnly?: boolean;
  say: (line: string) => void;
}

/**
 * Helm's client-side rate limit for the scale rows, the same for both contenders (helm reads
 * HELM_QPS/HELM_BURST_LIMIT; the installer's helm inherits its environment). At helm's default
 * (HELM_QPS 0: client-go's 5 requests a second) helm 4's --wait=watcher spent 55 of the 80 s an
 * install of 100 Deployments took, and both contenders would pay it alike, hiding our own cost.
 */
export const SCALE_HELM_ENV = { HELM_QPS: '1000', HELM_BURST_LIMIT: '2000' };

/** The `helm upgrade` argv the installer ran, from its debug log (one JSON object per line). */
export function upgradeArgvOf(log: string): string[] {
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

/** The newest revision number (a count would stop at --history-max). */
async function lastRevision(release: string, namespace: string, env: Record<string, string>): Promise<number> {
  const r = await execa(helm4, ['history', release, '--namespace', namespace, '--max', '1', '-o', 'json'], {
    env,
    reject: false,
  });
  return r.exitCode === 0 ? ((JSON.parse(String(r.stdout)) as { revision: number }[]).at(-1)?.revision ?? 0) : 0;
}

/** A chart of `count` Deployments, one replica each, for the scale rows. */
export function scaleChart(dir: string, count: number): string {
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

export async function installRows(options: InstallBenchOptions): Promise<Row[]> {
  const { runs, say } = options;
  const cluster = await ensureCluster({ log: (l) => say(`[cluster] ${l}`), usage: 'keep' });
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, HELM_INSTALLER_TERMINATION_LOG: '/dev/null' } as Record<
    string,
    string
  >;
  const kube = { kubeconfig: cluster.kubeconfig };
  const node = process.execPath;
  const dir = tempDir('bench-install');
  const stamp = Date.now().toString(36);
  const namespaces: string[] = [];
  const ns = async (name: string) => {
    const n = `bench-${stamp}-${name}`;
    namespaces.push(n);
    await kubectl(['create', 'namespace', n], kube);
    return n;
  };
  const rows: Row[] = [];
  writeFileSync(join(dir, 'none.yaml'), '{}\n');

  let lastArgv: string[] = [];
  /** Each counted run's phases (phases.ts), of the row being measured. */
  let phases: Phases[] = [];
  // `scale`: the run's namespace is deleted right after it (not timed), so every install of a
  // large chart meets a cluster as empty as the first did, not the thousands of pods of the runs
  // before it (deleting 1000 Deployments with their pods takes about 35 s).
  const installOurs =
    (label: string, chart?: string, scale = false) =>
    async (i: number) => {
      await topUpVolumePool(cluster.kubeconfig);
      // The bundled storefront chart alone (the app is a release plan): the rows compare one chart with helm.
      const source = chart ? generatedChart(chart, join(dir, 'none.yaml')) : bundledChart();
      const namespace = await ns(`ours-${label}-${i < 0 ? 'w' : i}`);
      const s = await timed(
        node,
        [...installerNodeArgs, cliPath, ...benchArgv.install(namespace, source, ['--log-level', 'debug'])],
        {
          env: scale ? { ...env, ...SCALE_HELM_ENV } : env,
        },
      );
      lastArgv = upgradeArgvOf(s.stdout);
      if (i >= 0) phases.push(phasesOf(s.stdout, s.startedAt, s.wall));
      if (scale) await dropNamespace(namespace);
      return s;
    };
  const installPlain =
    (label: string, scale = false) =>
    async (i: number) => {
      await topUpVolumePool(cluster.kubeconfig);
      const namespace = await ns(`helm-${label}-${i}`);
      const s = await timed(helm4, withNamespace(lastArgv, namespace), {
        env: scale ? { ...env, ...SCALE_HELM_ENV } : env,
      });
      if (scale) await dropNamespace(namespace);
      return s;
    };
  const dropNamespace = async (namespace: string) => {
    await kubectl(['delete', 'namespace', namespace, '--timeout=15m'], { ...kube, timeoutMs: 15 * 60_000 });
    namespaces.splice(namespaces.indexOf(namespace), 1);
  };

  try {
    if (!options.scaleOnly) await unscaledRows();
    for (const count of options.scale) {
      const began = Date.now();
      say(
        `scale: a chart of ${count} Deployments, ${runs} runs each (helm ${Object.entries(SCALE_HELM_ENV)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} for both)`,
      );
      const chart = scaleChart(dir, count);
      await installOurs(`scale${count}`, chart, true)(-1);
      const scaled = await alternate(
        runs,
        installOurs(`scale${count}`, chart, true),
        installPlain(`scale${count}`, true),
      );
      rows.push({
        comparison: `install, ${count} Deployments`,
        ...scaled,
        referenceName: '`helm upgrade --install`, same argv',
        ...(count >= 100
          ? { maxRatio: 1.05, goal: 'at most 1.05x' }
          : { maxRatio: Number.POSITIVE_INFINITY, maxAddedSeconds: 0.15, goal: 'at most 0.15 s added' }),
        note: `HELM_QPS=${SCALE_HELM_ENV.HELM_QPS} for both`,
      });
      if (count === 100) {
        rows.push(
          await noopRow(`${count} Deployments`, generatedChart(chart, join(dir, 'none.yaml')), lastArgv, {
            maxRatio: 1 / 5,
            goal: 'at least 5x faster (at most 0.20x)',
            scale: true,
          }),
        );
      }
      // The rows as soon as they are measured: a later row that fails must not lose them.
      say(
        `scale: ${count} Deployments took ${((Date.now() - began) / 60_000).toFixed(1)} min:\n${markdownTable(rows.slice(count === 100 ? -2 : -1))}`,
      );
    }
  } finally {
    say(`deleting ${namespaces.length} namespaces`);
    for (const n of namespaces)
      await kubectl(['delete', 'namespace', n, '--wait=false', '--ignore-not-found'], { ...kube, reject: false });
  }
  return rows;

  /**
   * An unchanged redeploy (the drift check on, as by default) against plain helm's upgrade with
   * the same argv, each on a release it installed untimed: no new revision of ours may appear.
   */
  async function noopRow(
    label: string,
    source: string[],
    argv: string[],
    goal: Pick<Row, 'maxRatio' | 'maxSeconds' | 'goal'> & { scale?: boolean },
  ): Promise<Row> {
    say(`no-op redeploy, ${label}: the same install again on a deployed release, ${runs} runs each`);
    const runEnv = goal.scale ? { ...env, ...SCALE_HELM_ENV } : env;
    const oursNs = await ns(`noop-ours-${label.replace(/[^a-z0-9]+/g, '-')}`);
    const helmNs = await ns(`noop-helm-${label.replace(/[^a-z0-9]+/g, '-')}`);
    const ourArgs = [...installerNodeArgs, cliPath, ...benchArgv.install(oursNs, source, ['--log-level', 'debug'])];
    const noopPhases: Phases[] = [];
    await timed(node, ourArgs, { env: runEnv });
    await timed(helm4, withNamespace(argv, helmNs), { env: runEnv });
    const [oursBefore, helmBefore] = [
      await lastRevision('bench', oursNs, env),
      await lastRevision('bench', helmNs, env),
    ];
    const noop = await alternate(
      runs,
      async () => {
        const s = await timed(node, ourArgs, { env: runEnv });
        if (!/unchanged release bench/.test(s.stderr))
          throw new Error(`the redeploy was not skipped:\n${s.stderr.slice(-2000)}`);
        noopPhases.push(phasesOf(s.stdout, s.startedAt, s.wall));
        return s;
      },
      () => timed(helm4, withNamespace(argv, helmNs), { env: runEnv }),
    );
    const [oursAdded, helmAdded] = [
      (await lastRevision('bench', oursNs, env)) - oursBefore,
      (await lastRevision('bench', helmNs, env)) - helmBefore,
    ];
    if (oursAdded !== 0) throw new Error(`the no-op redeploy added ${oursAdded} revisions`);
    return {
      comparison: `no-op redeploy with the drift check, ${label}`,
      ...noop,
      referenceName: '`helm upgrade`, same argv',
      maxRatio: goal.maxRatio,
      maxSeconds: goal.maxSeconds,
      goal: `${goal.goal}, 0 new revisions`,
      note: `new revisions: ours ${oursAdded}, helm ${helmAdded}`,
      explain: describePhases(noopPhases),
    };
  }

  async function unscaledRows(): Promise<void> {
    say(`startup: helm-installer --version against helm version, ${runs} runs each`);
    const startup = await alternate(
      runs,
      () => timed(node, [...installerNodeArgs, cliPath, ...benchArgv.version()], { env }),
      () => timed(helm4, ['version', '--short'], { env }),
    );
    rows.push({
      comparison: 'startup: `--version`',
      ...startup,
      referenceName: '`helm version`',
      maxRatio: 2,
      goal: 'at most 2x',
    });

    say(`install: the bundled chart, ${runs} runs each`);
    // A first run of ours (not counted) captures the argv plain helm replays.
    await installOurs('bundled')(-1);
    phases = [];
    const install = await alternate(runs, installOurs('bundled'), installPlain('bundled'));
    rows.push({
      comparison: 'install, bundled chart',
      ...install,
      explain: describePhases(phases, median(install.reference.map((x) => x.wall))),
      referenceName: '`helm upgrade --install`, same argv',
      maxRatio: Number.POSITIVE_INFINITY,
      maxAddedSeconds: 0.15,
      goal: 'at most 0.15 s added',
    });

    rows.push(
      await noopRow('bundled chart', bundledChart(), lastArgv, {
        maxRatio: 1 / 7,
        maxSeconds: 0.3,
        goal: 'at most 0.3 s and at least 7x faster (at most 0.14x)',
      }),
    );

    // What KOTS runs on most redeploys with a changed config: an upgrade of a deployed release.
    // Each run upgrades a release installed (untimed) into a namespace of its own by the same
    // contender, with a value no run used before, so it is never a no-op.
    say(`upgrade: the bundled chart with a changed value, ${runs} runs each`);
    const changed = (i: number) => ['--set', `web.podAnnotations.bench=run-${i}`];
    let upgradeArgv: string[] = [];
    const upgradeOurs = async (i: number) => {
      const namespace = await ns(`up-ours-${i}`);
      await timed(node, [...installerNodeArgs, cliPath, ...benchArgv.install(namespace, bundledChart())], { env });
      const s = await timed(
        node,
        [
          ...installerNodeArgs,
          cliPath,
          ...benchArgv.install(namespace, bundledChart(), [...changed(i), '--log-level', 'debug']),
        ],
        { env },
      );
      upgradeArgv = upgradeArgvOf(s.stdout);
      if (i >= 0) phases.push(phasesOf(s.stdout, s.startedAt, s.wall));
      return s;
    };
    const upgradePlain = async (i: number) => {
      const namespace = await ns(`up-helm-${i}`);
      await timed(helm4, withNamespace(lastArgv, namespace), { env });
      return timed(helm4, withNamespace(upgradeArgv, namespace), { env });
    };
    await upgradeOurs(-1);
    phases = [];
    const upgrade = await alternate(runs, upgradeOurs, upgradePlain);
    rows.push({
      comparison: 'upgrade, bundled chart (a changed value)',
      ...upgrade,
      explain: describePhases(phases, median(upgrade.reference.map((x) => x.wall))),
      referenceName: '`helm upgrade`, same argv',
      maxRatio: Number.POSITIVE_INFINITY,
      maxAddedSeconds: 0.15,
      goal: 'at most 0.15 s added (as installs)',
    });
  }
}
