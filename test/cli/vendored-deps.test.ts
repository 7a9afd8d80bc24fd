// Vendored dependencies through the built CLI (issue 21, item 5): every command that reads the
// chart refuses one whose dependency is not in charts/ (exit 3, the message naming it) before
// any helm call and before the cluster: HELM_BIN is a script that records being run, KUBECONFIG
// names an address nothing listens on, and the dependency's repository cannot be reached. A
// chart with everything vendored (one unpacked, one archived under an alias) passes check-chart
// and renders with helm 4 and helm 3. Expected text written by hand.
import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm, helm3, helm4, repoRoot, runCli, tempDir } from '../helpers.js';

const dir = tempDir('vendored-deps');
const unvendored = join(dir, 'unvendored-deps');
cpSync(join(repoRoot, 'test/fixtures/charts/unvendored-deps'), unvendored, { recursive: true });
const vendored = join(dir, 'vendored-deps');
cpSync(join(repoRoot, 'test/fixtures/charts/vendored-deps'), vendored, { recursive: true });
const archived = helm(helm4, [
  'package',
  join(repoRoot, 'test/fixtures/subcharts/gauge'),
  '-d',
  join(vendored, 'charts'),
]);

const marker = join(dir, 'helm-was-run');
const fakeHelm = join(dir, 'helm');
writeFileSync(fakeHelm, `#!/bin/sh\necho "$@" >> ${marker}\nexit 1\n`);
chmodSync(fakeHelm, 0o755);
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
);
const offline = { HELM_BIN: fakeHelm, KUBECONFIG: kubeconfig, HELM_INSTALLER_LOG_FORMAT: 'pretty' };

const CAUSE = `cause: chart ${unvendored}: dependency cache 0.3.2 (pinned in Chart.lock) is not vendored: charts/ holds no chart`;
const NEXT = `next: Where the network is reachable, run \`helm dependency build ${unvendored}\`, then rebuild the installer image: an airgapped install cannot download a dependency.`;

describe('a chart whose dependency is not vendored', () => {
  it.each([['check-chart'], ['values'], ['render'], ['images'], ['install'], ['plan']])(
    '%s: exit 3 naming it, no helm run, no cluster, no fetch',
    async (command) => {
      const started = Date.now();
      const r = await runCli([command, '--chart', unvendored], { env: offline });
      expect(r.exitCode, r.stderr).toBe(3);
      expect(r.stderr).toContain(`helm-installer FAILED (exit 3: invalid input)\n`);
      // The summary ends stderr (execa drops its final newline).
      expect(r.stderr.endsWith(`\n${CAUSE}\n${NEXT}`)).toBe(true);
      expect(existsSync(marker) ? readFileSync(marker, 'utf8') : '').toBe('');
      // An attempt at the cluster would take --connect-timeout (60 s) against 127.0.0.1:1.
      expect(Date.now() - started).toBeLessThan(20_000);
    },
  );

  it('the same from the environment: HELM_INSTALLER_CHART', async () => {
    const r = await runCli(['check-chart'], { env: { ...offline, HELM_INSTALLER_CHART: unvendored } });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(CAUSE);
  });

  it('a version other than the one Chart.lock pins is named with both', async () => {
    const wrong = join(dir, 'wrong-version');
    cpSync(join(repoRoot, 'test/fixtures/charts/vendored-deps'), wrong, { recursive: true });
    writeFileSync(join(wrong, 'charts', 'cache', 'Chart.yaml'), 'apiVersion: v2\nname: cache\nversion: 0.3.3\n');
    await helm(helm4, ['package', join(repoRoot, 'test/fixtures/subcharts/gauge'), '-d', join(wrong, 'charts')]);
    const r = await runCli(['check-chart', '--chart', wrong], { env: offline });
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain(
      `\ncause: chart ${wrong}: dependency cache is 0.3.3 in charts/, but Chart.lock pins 0.3.2\n`,
    );
  });
});

describe('a release plan (the image build checks the same)', () => {
  it("check-chart checks every chart of the bundled app's plan", async () => {
    const r = await runCli(['check-chart'], { env: offline });
    expect(r.exitCode, r.stderr).toBe(0);
    const app = join(repoRoot, 'app');
    expect(r.stdout).toBe(
      [
        `release plan ${app}/releases.yaml: 3 chart(s)`,
        `chart ${app}/promotions-operator: promotions-operator 0.2.0`,
        'no dependencies',
        `chart ${app}/storefront: storefront 1.4.0`,
        `  ${app}/storefront: cache 0.3.2 in charts/ (Chart.yaml asks for 0.3.2)`,
        'every dependency vendored (1 checked)',
        `chart ${app}/storefront/charts/cache: cache 0.3.2`,
        'no dependencies',
      ].join('\n'),
    );
  });

  it('one chart of the plan without its dependency: exit 3 naming that chart and dependency', async () => {
    writeFileSync(
      join(dir, 'releases.yaml'),
      'apiVersion: helm-installer/v1\nkind: ReleasePlan\napp: deps\nreleases:\n  - {name: good, chart: vendored-deps}\n  - {name: bad, chart: unvendored-deps}\n',
    );
    await archived;
    const r = await runCli(['check-chart', '--app-dir', dir], { env: offline });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(CAUSE);
  });
});

describe('a chart with every dependency vendored', () => {
  it('check-chart prints what it checked and exits 0, with no helm', async () => {
    await archived;
    const r = await runCli(['check-chart', '--chart', vendored], { env: offline });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      [
        `chart ${vendored}: shop 1.0.0`,
        `  ${vendored}: cache 0.3.2 in charts/ (Chart.lock pins 0.3.2; Chart.yaml asks for 0.3.2)`,
        `  ${vendored}: gauge (alias monitor) 1.2.4 in charts/ (Chart.lock pins 1.2.4; Chart.yaml asks for ~1.2.0)`,
        'every dependency vendored (2 checked)',
      ].join('\n'),
    );
    expect(existsSync(marker)).toBe(false);
  });

  it.each([
    ['helm 4', helm4],
    ['helm 3', helm3],
  ])('render gives both dependencies, the archived one under its alias, %s', async (_name, helmBin) => {
    await archived;
    const r = await runCli(['render', '--chart', vendored, '--release', 'r'], { env: { HELM_BIN: helmBin } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect([...r.stdout.matchAll(/^ {2}name: (\S+)$/gm)].map((m) => m[1]).sort()).toEqual([
      'r-cache',
      'r-monitor',
      'r-shop',
    ]);
  });
});

describe("a subchart's dependency off its lock's pin, within its range (issue 36)", () => {
  // test/fixtures/charts/off-pin: offpin -> mid (unpacked) -> lib 2.2.4, mid's Chart.lock pinning 2.2.3, its Chart.yaml asking ~2.2.0.
  const chart = join(dir, 'off-pin');
  cpSync(join(repoRoot, 'test/fixtures/charts/off-pin'), chart, { recursive: true });
  const problem = `chart ${chart}/charts/mid: dependency lib is 2.2.4 in charts/, but Chart.lock pins 2.2.3`;

  it("check-chart (the vendor's CI): exit 3 naming both versions", async () => {
    const r = await runCli(['check-chart', '--chart', chart], { env: offline });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(`\ncause: ${problem}\n`);
    expect(r.stdout).toBe('');
  });

  it.each([
    ['helm 4', helm4],
    ['helm 3', helm3],
  ])('render: a warning naming both, and the dependency rendered (%s)', async (_name, helmBin) => {
    const r = await runCli(['render', '--chart', chart, '--release', 'r'], {
      env: { HELM_BIN: helmBin, HELM_INSTALLER_LOG_FORMAT: 'pretty' },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `${problem}: installed as it is (it is within the range ~2.2.0 Chart.yaml asks for); the vendor's CI (helm-installer check-chart) refuses this chart until its charts/ matches the lock`,
    );
    expect(r.stdout).toContain('  name: r-lib\ndata:\n  version: "2.2.4"');
  });
});
