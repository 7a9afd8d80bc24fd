// `npm run bench` is never a test, but its commands must stay ones the CLI accepts: a row whose
// argv the CLI refuses (an option renamed, `--release` against the default app now that it is a
// release plan) fails here instead of minutes into a bench run. Every row's argv, built by the
// same functions the bench runs (test/bench/commands.ts) on the same kind of inputs (the bundled
// app, generated charts and apps), is run on the built CLI against a cluster that does not answer:
// the options are read and checked, the inputs loaded, and the run ends at its first cluster
// call (exit 5 after --connect-timeout), or, for what needs no cluster (--version, export), ends
// as the bench expects. Never exit 2 (a usage error).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchArgv, bundledChart, generatedChart } from '../bench/commands.js';
import { crdChart } from '../bench/crd-rows.js';
import { scaleChart } from '../bench/install-rows.js';
import { planApp } from '../bench/release-plan-rows.js';
import { runCli, tempDir } from '../helpers.js';

const dir = tempDir('bench-commands');
const none = join(dir, 'none.yaml');
writeFileSync(none, '{}\n');
const customer = join(dir, 'storefront.yaml');
writeFileSync(customer, 'web:\n  replicaCount: 1\n');
// No API server listens on port 1: each cluster call fails at once, retried up to --connect-timeout.
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
);
const registry = '127.0.0.1:1';
const scaled = generatedChart(scaleChart(dir, 3), none);
const side = planApp(dir, ['a', 'b'], false);
const chain = planApp(dir, ['a', 'b'], true);
const inputs = benchArgv.appInputs(customer, registry);

/** Every row's argv, and the exit codes a run of it may end with here. */
const rows: { row: string; argv: string[]; exit: number[] }[] = [
  { row: 'startup', argv: benchArgv.version(), exit: [0] },
  { row: 'install, bundled chart', argv: benchArgv.install('ns', bundledChart(), ['--log-level', 'debug']), exit: [5] },
  { row: 'no-op redeploy, bundled chart', argv: benchArgv.install('ns', bundledChart()), exit: [5] },
  {
    row: 'upgrade, bundled chart',
    argv: benchArgv.install('ns', bundledChart(), ['--set', 'web.podAnnotations.bench=run-0', '--log-level', 'debug']),
    exit: [5],
  },
  {
    row: 'install and no-op, generated chart',
    argv: benchArgv.install('ns', scaled, ['--log-level', 'debug']),
    exit: [5],
  },
  {
    row: 'plan, bundled chart',
    argv: benchArgv.plan('ns', bundledChart(), ['web.podAnnotations.bench=plan']),
    exit: [5],
  },
  { row: 'plan, generated chart', argv: benchArgv.plan('ns', scaled, ['count=2']), exit: [5] },
  { row: 'release plan, side by side', argv: benchArgv.releasePlan(side, 'ns'), exit: [5] },
  { row: 'release plan, a chain', argv: benchArgv.releasePlan(chain, 'ns'), exit: [5] },
  { row: 'release plan, one chart alone', argv: benchArgv.releasePlanPart(side, 'a', 'ns'), exit: [5] },
  { row: 'export, bundled app', argv: benchArgv.export(join(dir, 'out'), inputs), exit: [0] },
  {
    row: 'export for Flux, bundled app',
    argv: benchArgv.exportForFlux(join(dir, 'flux'), inputs, 'app', 'flux', `${registry}/bench-export/app`),
    exit: [0],
  },
  { row: 'install, bundled app (against Flux)', argv: benchArgv.appInstall('ns', inputs), exit: [5] },
  {
    row: 'CRD chart upgrade',
    argv: benchArgv.crdInstall(crdChart(dir, 'crds', 'bench.example.com', false), 'ns', 'run-0', [
      '--log-level',
      'debug',
    ]),
    exit: [5],
  },
];

describe('the bench rows', () => {
  it.each(rows)('$row: the CLI accepts its command', async ({ argv, exit }) => {
    const r = await runCli(argv, {
      env: {
        KUBECONFIG: kubeconfig,
        HELM_INSTALLER_CONNECT_TIMEOUT: '1s',
        HELM_INSTALLER_TERMINATION_LOG: '/dev/null',
      },
    });
    expect(exit, `exit ${r.exitCode}: ${argv.join(' ')}\n${r.stderr.slice(-1500)}`).toContain(r.exitCode);
  });
});
