// The CRD step's figures (issue 29): an upgrade of a chart with 10 CRDs of about 2 MB in all in
// crds/, each changed on every run (a field added or removed), against plain `helm upgrade` with
// the installer's own argv (which leaves crds/ alone: the difference is what the CRD step adds;
// goal at most 0.3 s, issue 38); an upgrade of that chart that changes a value and no CRD (their
// digests match: no CRD read whole or written; goal at most 0.1 s); and an unchanged redeploy (the
// no-op path reads no CRD). Each contender upgrades its own release, in its own namespace. The
// counted runs of ours log at debug level, and each row gives where their time goes (phases.ts).
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { connectKube } from '../../src/cluster/kube-client.js';
import { objectClient, type Obj } from '../../src/cluster/object-client.js';
import { ensureCluster } from '../cluster/control-plane.js';
import { kubectl } from '../cluster/kube.js';
import { cliPath, helm4, installerNodeArgs, tempDir } from '../helpers.js';
import { upgradeArgvOf } from './install-rows.js';
import { benchArgv } from './commands.js';
import { alternate, median, timed, type Row } from './measure.js';
import { describePhases, phasesOf, type Phases } from './phases.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const CRDS = 10;
/** Schema properties per CRD, with descriptions as long as real operators' (about 200 KB a CRD). */
const PROPERTIES = 600;

/**
 * One chart version: `extra` adds a field to every CRD, so going from one version to the other
 * changes all ten. `crds: false` leaves crds/ out: the same chart without its CRDs, whose upgrade
 * tells what the CRDs themselves add to one.
 */
export function crdChart(dir: string, name: string, group: string, extra: boolean, o = { crds: true }): string {
  const chart = join(dir, name);
  mkdirSync(join(chart, 'crds'), { recursive: true });
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: crd-bench\nversion: 1.0.0\n');
  writeFileSync(join(chart, 'values.yaml'), 'note: a\n');
  writeFileSync(
    join(chart, 'templates', 'config.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: crd-bench\ndata:\n  note: {{ .Values.note | quote }}\n',
  );
  const description =
    'A field as real operators document theirs, with a description long enough to weigh what theirs weigh. '.repeat(3);
  for (let c = 0; c < CRDS; c++) {
    const properties = Object.fromEntries(
      Array.from({ length: PROPERTIES + (extra ? 1 : 0) }, (_, i) => [`field${i}`, { type: 'string', description }]),
    );
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `kind${c}s.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind: `Kind${c}`, plural: `kind${c}s`, singular: `kind${c}`, listKind: `Kind${c}List` },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties } } } },
          },
        ],
      },
    };
    if (o.crds) writeFileSync(join(chart, 'crds', `kind${c}.yaml`), stringify(crd));
  }
  return chart;
}

/** One chart version's CRDs as values, for the API server's own time (apiServerApplies). */
function crdsOf(chart: string): Obj[] {
  return readdirSync(join(chart, 'crds')).map((f) => parse(readFileSync(join(chart, 'crds', f), 'utf8')) as Obj);
}

/**
 * The floor under the first row: the API server's own time to server-side apply ten changed CRDs
 * of the same size at once (as the CRD step does), from this process with the installer's own
 * client, no installer run and no helm: what any installer that does not leave the CRDs stale
 * pays. CRDs of a group of their own (created by the first, untimed apply), so that the rows'
 * CRDs get no other writer.
 */
async function apiServerApplies(kubeconfig: string, charts: string[], runs: number): Promise<number[]> {
  // The client reads KUBECONFIG from the process's environment (loadFromDefault), as in the Job.
  process.env.KUBECONFIG = kubeconfig;
  const kube = await connectKube();
  const client = await objectClient(kube);
  const versions = charts.map(crdsOf);
  const applyAll = async (i: number) => {
    const started = performance.now();
    await Promise.all(
      versions[i % 2]!.map((crd) =>
        client.apply(`${CRD_PATH}/${String((crd.metadata as Obj).name)}`, crd, {
          fieldManager: 'bench-floor',
          dryRun: false,
        }),
      ),
    );
    return (performance.now() - started) / 1000;
  };
  await applyAll(1);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await applyAll(i));
  return times;
}

export async function crdRows(o: { runs: number; say: (line: string) => void }): Promise<Row[]> {
  const cluster = await ensureCluster({ log: (l) => o.say(`[cluster] ${l}`), usage: 'keep' });
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, HELM_INSTALLER_TERMINATION_LOG: '/dev/null' } as Record<
    string,
    string
  >;
  const kube = { kubeconfig: cluster.kubeconfig };
  const stamp = Date.now().toString(36);
  const group = `bench-${stamp}.example.com`;
  const dir = tempDir('bench-crds');
  const charts = [crdChart(dir, 'a', group, false), crdChart(dir, 'b', group, true)];
  const [ours, plain] = [`bench-${stamp}-crd-ours`, `bench-${stamp}-crd-helm`];
  const rows: Row[] = [];
  try {
    for (const ns of [ours, plain]) await kubectl(['create', 'namespace', ns], kube);
    /** Each counted run's phases (phases.ts), of the row being measured. */
    let phases: Phases[] = [];
    const cli = (chart: string, note: string, extra: string[] = []) =>
      timed(process.execPath, [...installerNodeArgs, cliPath, ...benchArgv.crdInstall(chart, ours, note, extra)], {
        env,
      });
    // As the install rows: the debug log gives where the time goes (the CRD step's own lines included).
    const counted = async (chart: string, note: string) => {
      const s = await cli(chart, note, ['--log-level', 'debug']);
      phases.push(phasesOf(s.stdout, s.startedAt, s.wall));
      return s;
    };
    const explain = (reference: { wall: number }[]) => {
      const line = describePhases(phases, median(reference.map((x) => x.wall)));
      phases = [];
      return line;
    };
    // The installer's own helm argv (debug log), replayed by plain helm with the chart and value of each run.
    const first = await cli(charts[0]!, 'setup', ['--log-level', 'debug']);
    const argv = upgradeArgvOf(first.stdout);
    const helmArgv = (chart: string, note: string) =>
      argv.map((a) => (a === charts[0] ? chart : a === 'note=setup' ? `note=${note}` : a === ours ? plain : a));
    await timed(helm4, helmArgv(charts[0]!, 'setup'), { env });
    o.say(
      `CRD step: an upgrade changing 10 CRDs of ${((CRDS * PROPERTIES * 340) / 1e6).toFixed(1)} MB against helm upgrade, same argv, ${o.runs} runs each`,
    );
    // Run i goes to chart (i+1) % 2: every run changes every CRD.
    const chartOf = (i: number) => charts[(i + 1) % 2]!;
    const changing = await alternate(
      o.runs,
      (i) => counted(chartOf(i), `run-${i}`),
      (i) => timed(helm4, helmArgv(chartOf(i), `run-${i}`), { env }),
    );
    const floorGroup = `floor-${group}`;
    const floor = await apiServerApplies(
      cluster.kubeconfig,
      [crdChart(dir, 'floor-a', floorGroup, false), crdChart(dir, 'floor-b', floorGroup, true)],
      o.runs,
    );
    rows.push({
      comparison: 'upgrade, 10 CRDs of 2 MB, every one changed (crds/)',
      referenceName: '`helm upgrade`, same argv (CRDs left stale)',
      ...changing,
      explain: `${explain(changing.reference)}; the API server alone, applying the same ten changed CRDs at once with no installer and no helm: ${median(floor).toFixed(2)} s (median of ${o.runs}), what any installer that does not leave them stale pays`,
      maxRatio: Number.POSITIVE_INFINITY,
      maxAddedSeconds: 0.3,
      goal: 'at most 0.3 s added',
    });
    o.say(`CRD chart: an upgrade that changes a value and no CRD against helm upgrade, same argv, ${o.runs} runs each`);
    const same = chartOf(o.runs - 1);
    const valueOnly = await alternate(
      o.runs,
      (i) => counted(same, `value-${i}`),
      (i) => timed(helm4, helmArgv(same, `value-${i}`), { env }),
    );
    rows.push({
      comparison: 'upgrade, chart with 10 CRDs unchanged (a value changed)',
      referenceName: '`helm upgrade`, same argv',
      ...valueOnly,
      explain: explain(valueOnly.reference),
      maxRatio: Number.POSITIVE_INFINITY,
      maxAddedSeconds: 0.1,
      goal: 'at most 0.1 s added (no CRD read whole: their digests match)',
    });
    rows.push(await withoutCrdsRow(o, { dir, group, env, helmArgv, stamp }));
    o.say(`CRD chart: an unchanged redeploy against helm upgrade, same argv, ${o.runs} runs each`);
    const note = `value-${o.runs - 1}`;
    const unchanged = await alternate(
      o.runs,
      () => cli(same, note),
      () => timed(helm4, helmArgv(same, note), { env }),
    );
    rows.push({
      comparison: 'unchanged redeploy, chart with 10 CRDs',
      referenceName: '`helm upgrade`, same argv',
      ...unchanged,
      maxRatio: Number.POSITIVE_INFINITY,
      goal: 'reported (reads no CRD)',
    });
  } finally {
    for (const ns of [ours, plain, `${ours}-bare`, `${plain}-bare`])
      await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { ...kube, reject: false });
    for (let c = 0; c < CRDS; c++)
      for (const g of [group, `floor-${group}`])
        await kubectl(['delete', 'crd', `kind${c}s.${g}`, '--wait=false', '--ignore-not-found'], {
          ...kube,
          reject: false,
        });
  }
  return rows;
}

/**
 * The same chart without its CRDs, a value changed, against plain helm: its "added" is what every
 * upgrade adds (issue 41), so the row above minus this one is what the ten unchanged CRDs add.
 */
async function withoutCrdsRow(
  o: { runs: number; say: (line: string) => void },
  c: {
    dir: string;
    group: string;
    env: Record<string, string>;
    helmArgv: (chart: string, note: string) => string[];
    stamp: string;
  },
): Promise<Row> {
  const bare = crdChart(c.dir, 'bare', c.group, false, { crds: false });
  const [ours, plain] = [`bench-${c.stamp}-crd-ours-bare`, `bench-${c.stamp}-crd-helm-bare`];
  for (const ns of [ours, plain]) await kubectl(['create', 'namespace', ns], { kubeconfig: c.env.KUBECONFIG });
  const cli = (note: string, extra: string[] = []) =>
    timed(process.execPath, [...installerNodeArgs, cliPath, ...benchArgv.crdInstall(bare, ours, note, extra)], {
      env: c.env,
    });
  const phases: Phases[] = [];
  // As the rows above: each counted run's debug log gives where its time goes, to set beside theirs.
  const counted = async (note: string) => {
    const run = await cli(note, ['--log-level', 'debug']);
    phases.push(phasesOf(run.stdout, run.startedAt, run.wall));
    return run;
  };
  // helm's argv with this chart and namespace: the same flags the installer gave its own helm.
  const helm = (note: string) =>
    timed(
      helm4,
      c.helmArgv(bare, note).map((a) => (a === `bench-${c.stamp}-crd-helm` ? plain : a)),
      { env: c.env },
    );
  await cli('setup');
  await helm('setup');
  o.say(`the same chart without its CRDs: an upgrade that changes a value against helm upgrade, ${o.runs} runs each`);
  const measured = await alternate(
    o.runs,
    (i) => counted(`bare-${i}`),
    (i) => helm(`bare-${i}`),
  );
  return {
    comparison: 'upgrade, the same chart without its CRDs (a value changed)',
    referenceName: '`helm upgrade`, same argv',
    ...measured,
    explain: describePhases(phases, median(measured.reference.map((x) => x.wall))),
    maxRatio: Number.POSITIVE_INFINITY,
    goal: 'reported: the row above less this one is what the unchanged CRDs add',
  };
}
