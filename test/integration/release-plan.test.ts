// Several charts from a release plan (issue 21) on the real API server, with the real helm 4 and
// helm 3: the fixture app test/fixtures/release-plan (operator <- web <- report, and a cache
// switched by PLAN_TEST_CACHE). What happened is read from the cluster (helm's records, the
// objects' timestamps), not from the installer's words; the summary is checked for what it says.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm, helm3, helm4, repoRoot, runCli, tempDir, type CliResult } from '../helpers.js';
import { history, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole } from './service-account.js';

const fixtureApp = join(repoRoot, 'test', 'fixtures', 'release-plan');
const namespace = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();
const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

interface PlanCliRun extends CliResult {
  termination: string;
  logs: Record<string, any>[];
}

async function installPlan(
  ns: string,
  args: string[] = [],
  env: Record<string, string> = {},
  appDir = fixtureApp,
): Promise<PlanCliRun> {
  const termination = join(tempDir('plan-term'), 'termination-log');
  writeFileSync(termination, '');
  const r = await runCli(['install', '--app-dir', appDir, '--namespace', ns, '--timeout', '60s', ...args], {
    env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: termination, ...env },
  });
  const logs = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>);
  return { ...r, termination: readFileSync(termination, 'utf8'), logs };
}

/** The plan's summary: the last lines of stderr, from its head line on. */
function summary(r: CliResult): string[] {
  const lines = r.stderr.trimEnd().split('\n');
  return lines.slice(lines.findLastIndex((l) => /^helm-installer( FAILED|: release plan)/.test(l)));
}

const deployed = async (release: string, ns: string) => (await history(release, ns)).map((h) => h.status);
const time = (s: string) => new Date(s).getTime();
const availableAt = async (ns: string, name: string) =>
  time(
    (await getJson(['get', 'deployment', name, '-o', 'json'], opts(ns))).status.conditions.find(
      (c: any) => c.type === 'Available' && c.status === 'True',
    ).lastTransitionTime,
  );
const createdAt = async (ns: string, kind: string, name: string) =>
  time((await getJson(['get', kind, name, '-o', 'json'], opts(ns))).metadata.creationTimestamp);

describe.concurrent('a release plan', () => {
  for (const [major, bin] of [
    ['4', helm4],
    ['3', helm3],
  ] as const) {
    it(`helm ${major}: installs each release after its dependencies are ready, marks them as the app's; a second run changes nothing`, async () => {
      const ns = await namespace(`plan-order-h${major}`);
      const first = await installPlan(ns, ['--helm-bin', bin]);
      expect(first.exitCode, first.stderr).toBe(0);
      for (const r of ['operator', 'web', 'report', 'cache']) expect(await deployed(r, ns)).toEqual(['deployed']);
      // A dependent's first object is created after its dependency's Deployment became
      // available (the API's timestamps are whole seconds); its helm started after the
      // dependency's helm had returned.
      expect(await createdAt(ns, 'configmap', 'web-settings')).toBeGreaterThanOrEqual(
        await availableAt(ns, 'operator'),
      );
      expect(await createdAt(ns, 'configmap', 'report-settings')).toBeGreaterThanOrEqual(await availableAt(ns, 'web'));
      const logged = (key: string, msg: RegExp) =>
        first.logs.find((l) => l.releaseKey === `${ns}/${key}` && msg.test(l.msg))!.time as number;
      expect(logged('operator', /^done$/)).toBeLessThan(logged('web', /^installing: /));
      expect(logged('web', /^done$/)).toBeLessThan(logged('report', /^installing: /));
      // The web part's Widget exists: the operator's CRD was there when web was installed.
      expect((await getJson(['get', 'widgets.plan-test.example.com', 'web', '-o', 'json'], opts(ns))).spec).toEqual({
        size: 1,
      });
      const labels = (await getJson(['get', 'secret', 'sh.helm.release.v1.web.v1', '-o', 'json'], opts(ns))).metadata
        .labels;
      expect(labels['helm-installer.io/app']).toBe('plan-test');
      const inventory = await getJson(
        ['get', 'configmap', 'helm-installer-plan-test-releases', '-o', 'json'],
        opts(ns),
      );
      expect(JSON.parse(inventory.data.releases)).toEqual([
        { namespace: ns, name: 'operator', deps: [] },
        { namespace: ns, name: 'web', deps: [`${ns}/operator`] },
        { namespace: ns, name: 'report', deps: [`${ns}/web`] },
        { namespace: ns, name: 'cache', deps: [] },
      ]);
      expect(summary(first)[0]).toMatch(
        /^helm-installer: release plan done, app revision 1 deployed: 4 of 4 releases done, [\d.]+s$/,
      );
      expect(
        summary(first)
          .slice(1)
          .map((l) => l.replace(/, [\d.]+s$/, '')),
      ).toEqual(['operator', 'web', 'report', 'cache'].map((r) => `  ${ns}/${r}: installed, revision 1`));

      const again = await installPlan(ns, ['--helm-bin', bin]);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(
        summary(again)
          .slice(1)
          .map((l) => l.replace(/, [\d.]+s$/, '')),
      ).toEqual(['operator', 'web', 'report', 'cache'].map((r) => `  ${ns}/${r}: unchanged, revision 1`));
      for (const r of ['operator', 'web', 'report', 'cache']) expect(await history(r, ns)).toHaveLength(1);
    });
  }

  it('--app-rollback never, a failing middle release: its dependent is not attempted, the others are deployed, exit 4 naming all', async () => {
    const ns = await namespace('plan-fail');
    const run = await installPlan(ns, ['--set', 'web:stuck=true', '--timeout', '15s', '--app-rollback', 'never']);
    expect(run.exitCode, run.stderr).toBe(4);
    expect(await deployed('operator', ns)).toEqual(['deployed']);
    expect(await deployed('cache', ns)).toEqual(['deployed']);
    expect(await deployed('web', ns)).toEqual([]); // a first install that failed is rolled back: uninstalled
    expect(await deployed('report', ns)).toEqual([]);
    expect(
      (await kubectl(['get', 'configmap', 'report-settings', '--ignore-not-found', '-o', 'name'], opts(ns))).stdout,
    ).toBe('');
    const lines = summary(run);
    expect(lines[0]).toBe(
      'helm-installer FAILED (exit 4: helm operation failed): 2 of 4 releases done, 1 failed, 1 not attempted; app revision 1 failed; releases left as they are (--app-rollback never)',
    );
    expect(lines[1]).toMatch(new RegExp(`^  ${ns}/operator: installed, revision 1, [\\d.]+s$`));
    expect(lines[2]).toMatch(
      new RegExp(
        `^  ${ns}/web: FAILED \\(exit 4\\) after [\\d.]+s: install/upgrade of release web failed: .*Deployment/${ns}/web not ready`,
      ),
    );
    expect(lines[4]).toBe(`  ${ns}/report: not attempted (its dependency ${ns}/web was not deployed)`);
    expect(lines[5]).toMatch(new RegExp(`^  ${ns}/cache: installed, revision 1, [\\d.]+s$`));
    expect(run.termination.trimEnd()).toBe(lines.join('\n'));
    // The failed release's own summary is in the log, with why its pod was not ready.
    expect(run.stderr).toMatch(new RegExp(`release: ${ns}/web .*\\n(.*\\n)*.*Unschedulable`));
  });

  it('a part switched off is uninstalled; kept with --prune-releases false; a release someone else made under its name is left alone', async () => {
    const ns = await namespace('plan-prune');
    expect((await installPlan(ns)).exitCode).toBe(0);
    // `plan` first: nothing to do; with the cache switched off, its uninstall (exit 10).
    const same = await runCli(['plan', '--app-dir', fixtureApp, '--namespace', ns], {
      env: { KUBECONFIG: kubeconfig() },
    });
    expect(same.exitCode, same.stderr).toBe(0);
    const preview = await runCli(['plan', '--app-dir', fixtureApp, '--namespace', ns, '-o', 'json'], {
      env: { KUBECONFIG: kubeconfig(), PLAN_TEST_CACHE: 'false' },
    });
    expect(preview.exitCode, preview.stderr).toBe(10);
    const json = JSON.parse(preview.stdout);
    expect(json.releases.map((r: any) => [r.release, r.decision.action])).toEqual([
      ['operator', 'nothing'],
      ['web', 'nothing'],
      ['report', 'nothing'],
    ]);
    expect(json.uninstall).toEqual([{ namespace: ns, name: 'cache', action: 'uninstall' }]);
    const previewJob = await installPlan(ns, ['--plan-only'], { PLAN_TEST_CACHE: 'false' });
    expect(previewJob.exitCode, previewJob.stderr).toBe(0);
    expect(previewJob.termination.trimEnd().split('\n')).toEqual([
      'plan only: release plan of 3 release(s); the install would make app revision 2 (from app revision 1); a failure takes every release back to app revision 1',
      ...['operator', 'web', 'report'].map((r) => `  ${ns}/${r}: nothing; 0 to create, 0 to change, 0 to delete`),
      `  ${ns}/cache: uninstall (no longer in the plan)`,
    ]);
    expect(await deployed('cache', ns)).toEqual(['deployed']);

    const kept = await installPlan(ns, [], { PLAN_TEST_CACHE: 'false', HELM_INSTALLER_PRUNE_RELEASES: 'false' });
    expect(kept.exitCode, kept.stderr).toBe(0);
    expect(await deployed('cache', ns)).toEqual(['deployed']);

    const off = await installPlan(ns, [], { PLAN_TEST_CACHE: 'false' });
    expect(off.exitCode, off.stderr).toBe(0);
    expect(summary(off).at(-1)).toBe(`  ${ns}/cache: uninstalled (no longer in the plan)`);
    expect(await deployed('cache', ns)).toEqual([]);
    expect(
      (await kubectl(['get', 'deployment,configmap', '--selector', 'app=cache', '-o', 'name'], opts(ns))).stdout,
    ).toBe('');
    expect((await kubectl(['get', 'deployment', 'cache', '--ignore-not-found', '-o', 'name'], opts(ns))).stdout).toBe(
      '',
    );
    for (const r of ['operator', 'web', 'report']) expect(await history(r, ns)).toHaveLength(1);

    // Back on, then reinstalled by hand (not ours any more), then off again: left alone.
    expect((await installPlan(ns)).exitCode).toBe(0);
    await helm(helm4, ['uninstall', 'cache', '--namespace', ns, '--wait'], { KUBECONFIG: kubeconfig() });
    await helm(helm4, ['install', 'cache', join(fixtureApp, 'charts', 'part'), '--namespace', ns], {
      KUBECONFIG: kubeconfig(),
    });
    const notOurs = await installPlan(ns, [], { PLAN_TEST_CACHE: '0' });
    expect(notOurs.exitCode, notOurs.stderr).toBe(0);
    expect(summary(notOurs).at(-1)).toBe(`  ${ns}/cache: not ours (no longer in the plan)`);
    expect(await deployed('cache', ns)).toEqual(['deployed']);
    expect(
      notOurs.logs.some(
        (l) =>
          l.level === 40 &&
          l.msg ===
            `release ${ns}/cache is no longer in the plan, but it is not this app's (no helm-installer.io/app=plan-test label): left alone`,
      ),
    ).toBe(true);
  });

  it('a bad plan (a cycle) is exit 3 naming the file, the line and the path, and touches nothing', async () => {
    const ns = await namespace('plan-cycle');
    const app = join(tempDir('plan-cycle'), 'app');
    cpSync(fixtureApp, app, { recursive: true });
    const file = join(app, 'releases.yaml');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('chart: charts/operator', 'chart: charts/operator\n    dependsOn: [report]'),
    );
    const run = await installPlan(ns, [], {}, app);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toContain(
      `cause: release plan ${file} line 8: dependency cycle: operator -> report -> web -> operator`,
    );
    expect(run.termination).toContain('dependency cycle: operator -> report -> web -> operator');
    expect(
      (await kubectl(['get', 'secrets,leases,configmaps,deployments', '-o', 'name'], opts(ns))).stdout.trim(),
    ).toBe('configmap/kube-root-ca.crt');
  });

  it('a plan that needs more RBAC than the Job has: exit 6 naming the release, kind and verb, before the first release starts', async () => {
    const ns = await namespace('plan-rbac');
    // The shipped Role lacks the fixture's Widget kind (the web part creates one).
    const kc = await identity(ns, shippedRole.rules);
    const run = await installPlan(ns, [], { KUBECONFIG: kc });
    expect(run.exitCode, run.stderr).toBe(6);
    expect(run.stderr).toContain(
      `release: ${ns}/web  namespace: ${ns}  action: rbac preflight\ncause: RBAC: this identity lacks 6 permission(s) the chart needs:\n  widgets.plan-test.example.com in namespace ${ns}: create, delete, get, list, patch, watch (Widget/web)\n`,
    );
    const lines = summary(run);
    expect(lines[0]).toMatch(
      /^helm-installer FAILED \(exit 6: preflight check failed\): 0 of 4 releases done, 1 failed, 3 not attempted; app revision 1 failed and changed no release: the app is at where it was before its first install \(nothing of it installed\)$/,
    );
    expect(
      lines.filter(
        (l) => l.includes('not attempted (') && l.includes(`${ns}/web failed its checks, so no release was started`),
      ),
    ).toHaveLength(3);
    for (const r of ['operator', 'web', 'report', 'cache']) expect(await history(r, ns)).toEqual([]);
    expect((await kubectl(['get', 'deployments,leases', '-o', 'name'], opts(ns))).stdout.trim()).toBe('');
  });
});
