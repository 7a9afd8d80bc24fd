// Issue 23's figures. `export` of the bundled app (the release plan's three charts, airgap on)
// against plain `helm template` of the same three charts with the same values, one after another
// (what a person runs to get the manifests by hand); the goal is the export under 2 s. Then Flux
// applying that export (the OCIRepository and the root Kustomization, as the export's README says,
// until every release's Kustomization is Ready) next to our install of the same inputs: reported,
// no goal on Flux's speed. Flux's controllers run for the whole row (test/cluster/flux.ts), so its
// CPU and memory are not a run's: only wall time is compared there.
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pushArtifact } from '../../src/export/oci-push.js';
import { ensureCluster } from '../cluster/control-plane.js';
import { KUSTOMIZATION, kustomizationsReady, startFlux } from '../cluster/flux.js';
import { applyYaml, kubectl } from '../cluster/kube.js';
import { appDir, cliPath, helm4, installerNodeArgs, tempDir } from '../helpers.js';
import { benchArgv } from './commands.js';
import { alternate, timed, type Row, type Sample } from './measure.js';

const OCI_REPOSITORY = 'ocirepositories.source.toolkit.fluxcd.io';
const RELEASES = ['promotions-operator', 'storefront', 'storefront-cache'];

/** What both rows share: the cluster, the inputs install and export are given, and a timed CLI run. */
interface Bench {
  runs: number;
  say: (line: string) => void;
  kube: { kubeconfig: string };
  registry: string;
  dir: string;
  env: Record<string, string>;
  inputs: string[];
  cli: (args: string[]) => ReturnType<typeof timed>;
  /** A fresh number for a folder or namespace name. */
  next: () => number;
}

export async function exportRows(o: { runs: number; say: (line: string) => void }): Promise<Row[]> {
  const cluster = await ensureCluster({ log: (l) => o.say(`[cluster] ${l}`), usage: 'keep' });
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig, HELM_INSTALLER_TERMINATION_LOG: '/dev/null' } as Record<
    string,
    string
  >;
  const dir = tempDir('bench-export');
  // The customer's file named after the release it is for, as KOTS mounts it.
  cpSync(join(appDir, 'examples', 'customer-values.yaml'), join(dir, 'storefront.yaml'));
  let n = 0;
  const b: Bench = {
    ...o,
    kube: { kubeconfig: cluster.kubeconfig },
    registry: cluster.registry,
    dir,
    env,
    inputs: benchArgv.appInputs(join(dir, 'storefront.yaml'), cluster.registry),
    cli: (args) => timed(process.execPath, [...installerNodeArgs, cliPath, ...args], { env }),
    next: () => n++,
  };
  return [await exportRow(b), await fluxRow(b)];
}

/** The export against helm template of the same three charts with the same values, one by one. */
async function exportRow(b: Bench): Promise<Row> {
  b.say(`export: the bundled app against helm template of its three charts, ${b.runs} runs each`);
  const byHand = async (): Promise<Sample> => {
    const samples: Sample[] = [];
    for (const [release, chart, values] of [
      ['promotions-operator', 'promotions-operator', []],
      ['storefront', 'storefront', ['values/base.yaml', 'plan/storefront.yaml']],
      ['storefront-cache', 'storefront/charts/cache', ['plan/cache.yaml']],
    ] as const) {
      const files = [
        ...values.map((v) => join(appDir, v)),
        ...(release === 'storefront' ? [join(b.dir, 'storefront.yaml')] : []),
      ];
      samples.push(
        await timed(helm4, ['template', release, join(appDir, chart), ...files.flatMap((f) => ['-f', f])], {
          env: b.env,
        }),
      );
    }
    return {
      wall: sum(samples.map((s) => s.wall)),
      cpu: sum(samples.map((s) => s.cpu)),
      rssMb: Math.max(...samples.map((s) => s.rssMb)),
    };
  };
  const exported = await alternate(
    b.runs,
    () => b.cli(benchArgv.export(join(b.dir, `out-${b.next()}`), b.inputs)),
    byHand,
  );
  return {
    comparison: 'export, bundled app (3 releases, --registry)',
    referenceName: '`helm template` of the 3 charts, one by one',
    ...exported,
    maxSeconds: 2,
    goal: 'under 2 s',
  };
}

/** Our install of the inputs against Flux applying their export, each into fresh namespaces. */
async function fluxRow(b: Bench): Promise<Row> {
  b.say(
    `export applied by Flux against our install of the same inputs, ${b.runs} runs each (Flux built first if missing)`,
  );
  const flux = await startFlux({ kubeconfig: b.kube.kubeconfig, log: (l) => b.say(`[flux] ${l}`) });
  const stamp = Date.now().toString(36);
  const namespaces: string[] = [];
  const fresh = async (what: string) => {
    const ns = `bench-${stamp}-${what}-${b.next()}`;
    namespaces.push(ns);
    await kubectl(['create', 'namespace', ns], b.kube);
    return ns;
  };
  const install = async () => b.cli(benchArgv.appInstall(await fresh('install'), b.inputs));
  try {
    const applied = await alternate(b.runs, install, async () => byFlux(b, await fresh('app'), await fresh('flux')));
    return {
      comparison: 'the same app: our install, against Flux applying the export',
      referenceName: "Flux, from applying the source to every Kustomization Ready (the export's push untimed)",
      ...applied,
      goal: 'none (reported); Flux CPU and memory not per run',
    };
  } finally {
    // A Kustomization's finalizer prunes what it applied: delete them while Flux still runs.
    for (const ns of namespaces.filter((x) => x.includes('-flux-'))) {
      await kubectl(['delete', `${KUSTOMIZATION},${OCI_REPOSITORY}`, '--all', '--wait=true', '--timeout=120s'], {
        ...b.kube,
        namespace: ns,
        reject: false,
        timeoutMs: 150_000,
      });
    }
    await flux.stop();
    for (const ns of namespaces)
      await kubectl(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found'], { ...b.kube, reject: false });
  }
}

/** Exports and pushes (untimed), then times what Flux does once told: source and root applied, until every release's Kustomization is Ready. */
async function byFlux(b: Bench, appNs: string, fluxNs: string): Promise<Sample> {
  const out = join(b.dir, `flux-${b.next()}`);
  await b.cli(benchArgv.exportForFlux(out, b.inputs, appNs, fluxNs, `${b.registry}/bench-export/${appNs}`));
  const digest = await pushArtifact({
    registry: b.registry,
    repository: `bench-export/${appNs}`,
    tag: 'v1',
    dir: out,
    source: 'helm-installer bench',
    revision: `v1@sha1:${'0'.repeat(40)}`,
    plainHttp: true,
  });
  const began = process.hrtime.bigint();
  for (const file of ['source.yaml', 'root.yaml'])
    await applyYaml(readFileSync(join(out, 'flux', file), 'utf8'), b.kube);
  await kustomizationsReady({
    kubeconfig: b.kube.kubeconfig,
    namespace: fluxNs,
    names: RELEASES,
    revision: `v1@${digest}`,
    intervalMs: 250,
  });
  return { wall: Number(process.hrtime.bigint() - began) / 1e9, cpu: 0, rssMb: 0 };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
