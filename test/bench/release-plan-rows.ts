// Several charts (issue 21's figures, and issue 30's plan of one): a plan of one chart against the
// same chart installed alone with --chart (the same path: goal at most 0.15 s added); a plan of five independent small charts against one of
// them installed alone (they run side by side: goal at most 1.3x) and against the five installed
// one by one; a chain of three against the three one by one (goal: at most their sum + 0.3 s).
// Every run is a first install into a fresh namespace (made untimed), so each one does the work.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCluster } from '../cluster/control-plane.js';
import { kubectl } from '../cluster/kube.js';
import { cliPath, installerNodeArgs, repoRoot, tempDir } from '../helpers.js';
import { benchArgv } from './commands.js';
import { alternate, timed, type Row, type Sample } from './measure.js';

const partChart = join(repoRoot, 'test', 'fixtures', 'release-plan', 'charts', 'part');

/** An app directory whose plan installs the fixture's `part` chart as `names`, each depending on the one before when `chain`. */
export function planApp(dir: string, names: string[], chain: boolean): string {
  const app = join(dir, `${chain ? 'chain' : 'side'}-${names.length}`);
  mkdirSync(app, { recursive: true });
  const releases = names.map(
    (n, i) => `  - name: ${n}\n    chart: part\n${chain && i > 0 ? `    dependsOn: [${names[i - 1]}]\n` : ''}`,
  );
  writeFileSync(
    join(app, 'releases.yaml'),
    `apiVersion: helm-installer/v1\nkind: ReleasePlan\napp: bench\nreleases:\n${releases.join('')}`,
  );
  // The chart inside the app directory, as a vendor ships it.
  cpSync(partChart, join(app, 'part'), { recursive: true });
  return app;
}

export async function releasePlanRows(o: { runs: number; say: (line: string) => void }): Promise<Row[]> {
  const cluster = await ensureCluster({ log: (l) => o.say(`[cluster] ${l}`), usage: 'keep' });
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, HELM_INSTALLER_TERMINATION_LOG: '/dev/null' } as Record<
    string,
    string
  >;
  const kube = { kubeconfig: cluster.kubeconfig };
  const dir = tempDir('bench-releases');
  const five = ['a', 'b', 'c', 'd', 'e'];
  const side = planApp(dir, five, false);
  const ofOne = planApp(dir, ['a'], false);
  const chain = planApp(dir, five.slice(0, 3), true);
  const stamp = Date.now().toString(36);
  const namespaces: string[] = [];
  let n = 0;
  const fresh = async () => {
    const ns = `bench-${stamp}-rel-${n++}`;
    namespaces.push(ns);
    await kubectl(['create', 'namespace', ns], kube);
    return ns;
  };
  const cli = (args: string[]) => timed(process.execPath, [...installerNodeArgs, cliPath, ...args], { env });
  const plan = async (app: string) => cli(benchArgv.releasePlan(app, await fresh()));
  const single = async (app: string, release: string, ns?: string) =>
    cli(benchArgv.releasePlanPart(app, release, ns ?? (await fresh())));
  /** `names` installed one after the other, as one sample: their wall and CPU added up. */
  const oneByOne = async (app: string, names: string[]): Promise<Sample> => {
    const ns = await fresh();
    const samples: Sample[] = [];
    for (const r of names) samples.push(await single(app, r, ns));
    return {
      wall: sum(samples.map((s) => s.wall)),
      cpu: sum(samples.map((s) => s.cpu)),
      rssMb: Math.max(...samples.map((s) => s.rssMb)),
    };
  };
  const rows: Row[] = [];
  try {
    o.say(`release plan of one chart against the chart alone, ${o.runs} runs each`);
    const one = await alternate(
      o.runs,
      () => plan(ofOne),
      () => single(ofOne, 'a'),
    );
    rows.push({
      comparison: 'release plan of one chart (inventory and app revision included)',
      referenceName: 'the chart alone (--chart)',
      ...one,
      maxRatio: 10,
      maxAddedSeconds: 0.15,
      goal: 'what one chart costs: at most 0.15 s added',
    });
    o.say(`release plan: five independent charts against one alone, ${o.runs} runs each`);
    const alone = await alternate(
      o.runs,
      () => plan(side),
      () => single(side, 'a'),
    );
    rows.push({
      comparison: 'release plan, 5 independent charts',
      referenceName: 'one of them installed alone',
      ...alone,
      maxRatio: 1.3,
      goal: 'at most 1.3x the slowest single install',
    });
    o.say(`release plan: five independent charts against the five one by one, ${o.runs} runs each`);
    const sequential = await alternate(
      o.runs,
      () => plan(side),
      () => oneByOne(side, five),
    );
    rows.push({
      comparison: 'release plan, 5 independent charts',
      referenceName: 'the 5 installed one by one',
      ...sequential,
      maxRatio: 1,
      goal: 'faster than one by one',
    });
    o.say(`release plan: a chain of three against the three one by one, ${o.runs} runs each`);
    const chained = await alternate(
      o.runs,
      () => plan(chain),
      () => oneByOne(chain, five.slice(0, 3)),
    );
    rows.push({
      comparison: 'release plan, a chain of 3',
      referenceName: 'the 3 installed one by one',
      ...chained,
      maxRatio: 10,
      maxAddedSeconds: 0.3,
      goal: 'at most the sum + 0.3 s',
    });
  } finally {
    for (const ns of namespaces)
      await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { ...kube, reject: false });
  }
  return rows;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
