// The app moves as one (issue 30), on the real API server with helm 4 and helm 3: the fixture app
// test/fixtures/release-plan (operator <- web <- report, and an independent cache). A run whose
// middle release fails takes every release it changed back to the last good app revision; a first
// install that fails half way leaves nothing installed. What happened is read from helm's records
// and the objects; the summary and the inventory are checked for what they say.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson } from '../cluster/kube.js';
import { helm3, helm4, repoRoot, runCli, tempDir, type CliResult } from '../helpers.js';
import { history, killMidRun, kubeconfig, namespacesDeletedAfterAll, spawnCli } from './cluster-helpers.js';

const fixtureApp = join(repoRoot, 'test', 'fixtures', 'release-plan');
const namespace = namespacesDeletedAfterAll();
const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

async function installApp(ns: string, args: string[]): Promise<CliResult & { termination: string }> {
  const termination = join(tempDir('app-term'), 'termination-log');
  writeFileSync(termination, '');
  const r = await runCli(['install', '--app-dir', fixtureApp, '--namespace', ns, ...args], {
    env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: termination },
  });
  return { ...r, termination: readFileSync(termination, 'utf8') };
}

function summary(r: CliResult): string[] {
  const lines = r.stderr.trimEnd().split('\n');
  return lines.slice(lines.findLastIndex((l) => /^helm-installer( FAILED|: release plan)/.test(l)));
}

const statuses = async (release: string, ns: string, bin: string) =>
  (await history(release, ns, bin)).map((h) => `${h.revision} ${h.status}`);
const message = async (ns: string, release: string) =>
  (await getJson(['get', 'configmap', `${release}-settings`], opts(ns))).data.message;
const appRevisions = async (ns: string) =>
  JSON.parse((await getJson(['get', 'configmap', 'helm-installer-plan-test-releases'], opts(ns))).data.appRevisions);

describe.concurrent('the app as one unit', () => {
  for (const [major, bin] of [
    ['4', helm4],
    ['3', helm3],
  ] as const) {
    it(`helm ${major}: the middle release of the next app version fails: the release this run upgraded goes back, the dependent never starts, exit 4 naming the app revision`, async () => {
      const ns = await namespace(`app-rollback-h${major}`);
      const first = await installApp(ns, ['--helm-bin', bin]);
      expect(first.exitCode, first.stderr).toBe(0);

      // The next app version: web, report and cache change; web cannot become ready.
      const next = [
        '--set',
        'web:message=v2',
        '--set',
        'report:message=v2',
        '--set',
        'cache:message=v2',
        '--set',
        'web:stuck=true',
        '--timeout',
        '15s',
        '--helm-bin',
        bin,
      ];
      // The plan names the app revision the install would make, and where a failure goes back to.
      const planned = await runCli(['plan', '--app-dir', fixtureApp, '--namespace', ns, ...next], {
        env: { KUBECONFIG: kubeconfig() },
      });
      expect(planned.exitCode, planned.stderr).toBe(10);
      expect(planned.stdout.split('\n')[0]).toBe(
        'App plan-test: the install would make app revision 2 (from app revision 1); a failure takes every release back to app revision 1',
      );
      const run = await installApp(ns, next);
      expect(run.exitCode, run.stderr).toBe(4);
      const lines = summary(run);
      expect(lines[0]).toBe(
        'helm-installer FAILED (exit 4: helm operation failed): 2 of 4 releases done, 1 failed, 1 not attempted; app revision 2 failed; every release it changed went back: the app is at app revision 1',
      );
      expect(lines).toContain(`  ${ns}/report: not attempted (its dependency ${ns}/web was not deployed)`);
      expect(lines.at(-1)).toBe(`  app rollback: ${ns}/cache: rolled back from revision 2 to 1 (now revision 3)`);
      expect(run.termination.trimEnd()).toBe(lines.join('\n'));
      // The Event (and so the webhook) of the release taken back names the app revision.
      const events = (await getJson(['get', 'events.events.k8s.io'], opts(ns))).items.filter(
        (e: any) => e.reason === 'RolledBack',
      );
      expect(events.map((e: any) => [e.type, e.regarding.name, e.note])).toEqual([
        [
          'Warning',
          ns,
          `release ${ns}/cache: app revision 2 failed; the app goes back to app revision 1: rolled back from revision 2 to 1 (now revision 3)`,
        ],
      ]);

      // Every release is back at app revision 1: the cache's upgrade undone, web rolled back by helm.
      expect(await message(ns, 'cache')).toBe('hello');
      expect(await message(ns, 'web')).toBe('hello');
      expect(await statuses('cache', ns, bin)).toEqual(['1 superseded', '2 superseded', '3 deployed']);
      expect((await statuses('web', ns, bin)).at(-1)).toMatch(/ deployed$/);
      expect(await statuses('report', ns, bin)).toEqual(['1 deployed']);
      expect(await statuses('operator', ns, bin)).toEqual(['1 deployed']);
      const revisions = await appRevisions(ns);
      expect(revisions.map((r: any) => [r.revision, r.status, r.rolledBackTo])).toEqual([
        [1, 'deployed', undefined],
        [2, 'rolled back', 1],
      ]);
      expect(revisions[0].releases.map((r: any) => [r.key, r.revision, r.chart])).toEqual([
        [`${ns}/operator`, 1, 'operator-0.1.0'],
        [`${ns}/web`, 1, 'part-0.1.0'],
        [`${ns}/report`, 1, 'part-0.1.0'],
        [`${ns}/cache`, 1, 'part-0.1.0'],
      ]);

      // The same version again, fixed: the next app revision is deployed.
      const fixed = await installApp(ns, ['--helm-bin', bin]);
      expect(fixed.exitCode, fixed.stderr).toBe(0);
      expect(summary(fixed)[0]).toMatch(
        /^helm-installer: release plan done, app revision 3 deployed: 4 of 4 releases done, [\d.]+s$/,
      );
    });
  }

  it('helm 4: SIGKILL when the app rollback starts: the next run (the same failing version) takes the release the killed run upgraded back too', async () => {
    const ns = await namespace('app-killed');
    expect((await installApp(ns, [])).exitCode).toBe(0);
    const failing = [
      '--set',
      'web:message=v2',
      '--set',
      'cache:message=v2',
      '--set',
      'web:stuck=true',
      '--timeout',
      '15s',
    ];
    const run = spawnCli(['install', '--app-dir', fixtureApp, '--namespace', ns, ...failing]);
    await killMidRun(run, run.logged('app revision 2 failed: ', 120_000));
    // The cache stays as the killed run left it: upgraded (or its rollback cut short).
    expect((await history('cache', ns)).length).toBeGreaterThan(1);

    const next = await installApp(ns, [...failing, '--lock-timeout', '90s']);
    expect(next.exitCode, next.stderr).toBe(4);
    // The killed run recorded no app revision: this run is app revision 2 again.
    expect(summary(next).join('\n')).toMatch(
      /; app revision 2 failed; every release it changed went back: the app is at app revision 1\n/,
    );
    expect(await message(ns, 'cache')).toBe('hello');
    expect(await message(ns, 'web')).toBe('hello');
    expect((await history('cache', ns)).at(-1)!.status).toBe('deployed');
  });

  it('helm 4: a first install that fails half way: everything it installed is uninstalled, nothing is left', async () => {
    const ns = await namespace('app-first');
    const run = await installApp(ns, ['--set', 'web:stuck=true', '--timeout', '15s']);
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(
      'helm-installer FAILED (exit 4: helm operation failed): 2 of 4 releases done, 1 failed, 1 not attempted; app revision 1 failed; every release it changed went back: the app is at where it was before its first install (nothing of it installed)',
    );
    expect(lines.slice(-2)).toEqual([
      `  app rollback: ${ns}/cache: uninstalled (new in the failed app revision)`,
      `  app rollback: ${ns}/operator: uninstalled (new in the failed app revision)`,
    ]);
    for (const r of ['operator', 'web', 'report', 'cache']) expect(await history(r, ns)).toEqual([]);
    expect((await appRevisions(ns)).map((r: any) => [r.revision, r.status])).toEqual([[1, 'rolled back']]);
  });
});
