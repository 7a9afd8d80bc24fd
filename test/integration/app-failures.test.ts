// The app moves as one (issue 30), every way it can fail, on the real API server with helm 4 (and
// helm 3): an app of three releases of the fixture's `part` chart, b depending on a and c beside
// them. A failure in a, in b (the middle of the chain), in c (independent), in the rollback itself
// (c's Lease held by another installer), SIGTERM and SIGKILL during the rollback, a plan edited
// between runs, a first install failing half way, and --app-rollback never. After each, a later
// run ends with every release at one app revision: each release's ConfigMap holds the same
// version's message, helm's newest record of each is deployed, and the inventory's newest app
// revision names those very revisions. Each test prints the time from the failure to the summary.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { getJson, kubectl } from '../cluster/kube.js';
import { helm3, helm4, repoRoot, runCli, tempDir, type CliResult } from '../helpers.js';
import {
  history,
  killMidRun,
  kubeconfig,
  namespacesDeletedAfterAll,
  spawnCli,
  waitForRelease,
} from './cluster-helpers.js';

const namespace = namespacesDeletedAfterAll();
const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

interface PlanRelease {
  name: string;
  dependsOn?: string[];
}
const ABC: PlanRelease[] = [{ name: 'a' }, { name: 'b', dependsOn: ['a'] }, { name: 'c' }];

/** An app directory of its own (the plan is edited by some tests): the fixture's part chart (and `templates`, added to it) and a plan of `releases`. */
function appDir(releases: PlanRelease[], templates: Record<string, string> = {}): string {
  const dir = tempDir('app-abc');
  cpSync(join(repoRoot, 'test', 'fixtures', 'release-plan', 'charts', 'part'), join(dir, 'charts', 'part'), {
    recursive: true,
  });
  for (const [name, text] of Object.entries(templates))
    writeFileSync(join(dir, 'charts', 'part', 'templates', name), text);
  writePlan(dir, releases);
  return dir;
}

/**
 * A ConfigMap that `frozen: true` makes immutable: the API server refuses any change to it, and
 * `immutable` cannot be unset, so no revision before the one that froze it can be put back.
 */
const FROZEN = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-frozen
{{- if .Values.frozen }}
immutable: true
{{- end }}
data:
  message: {{ .Values.message | quote }}
`;

function writePlan(dir: string, releases: PlanRelease[]): void {
  const lines = releases.map(
    (r) =>
      `  - name: ${r.name}\n    chart: charts/part\n${r.dependsOn ? `    dependsOn: [${r.dependsOn.join(', ')}]\n` : ''}`,
  );
  writeFileSync(
    join(dir, 'releases.yaml'),
    `apiVersion: helm-installer/v1\nkind: ReleasePlan\napp: abc\nreleases:\n${lines.join('')}`,
  );
}

async function install(dir: string, ns: string, args: string[]): Promise<CliResult & { termination: string }> {
  const termination = join(tempDir('app-term'), 'termination-log');
  writeFileSync(termination, '');
  const r = await runCli(['install', '--app-dir', dir, '--namespace', ns, ...args], {
    env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: termination },
  });
  return { ...r, termination: readFileSync(termination, 'utf8') };
}

/** The first app version, installed: app revision 1. */
async function installed(dir: string, ns: string, args: string[]): Promise<void> {
  const r = await install(dir, ns, args);
  expect(r.exitCode, r.stderr).toBe(0);
}

/** The next app version: every release's message changes; `failing` (if any) cannot become ready within the timeout. */
const v2 = (names: string[], failing?: string, bin = helm4) => [
  ...names.flatMap((n) => ['--set', `${n}:message=v2`]),
  ...(failing ? ['--set', `${failing}:stuck=true`, '--timeout', '10s'] : []),
  '--helm-bin',
  bin,
];

function summary(r: { stderr: string }): string[] {
  const lines = r.stderr.trimEnd().split('\n');
  return lines.slice(lines.findLastIndex((l) => /^helm-installer( FAILED|: release plan)/.test(l)));
}

/** Each release as the cluster has it: its ConfigMap's message and helm's newest record, or absent. */
async function where(ns: string, names: string[], bin = helm4): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const n of names) {
    const h = await history(n, ns, bin);
    out[n] =
      h.length === 0
        ? 'absent'
        : `${(await getJson(['get', 'configmap', `${n}-settings`], opts(ns))).data.message} ${h.at(-1)!.status}`;
  }
  return out;
}

const appRevisions = async (ns: string): Promise<any[]> =>
  JSON.parse((await getJson(['get', 'configmap', 'helm-installer-abc-releases'], opts(ns))).data.appRevisions);

/**
 * Every release at one app revision: each of `names` deployed with `message` (one version, tested
 * together), and the inventory's newest app revision naming exactly those releases at their
 * deployed revisions (what a later run compares with).
 */
async function expectOneAppRevision(ns: string, names: string[], message: string, bin = helm4): Promise<void> {
  expect(await where(ns, names, bin)).toEqual(Object.fromEntries(names.map((n) => [n, `${message} deployed`])));
  const newest = (await appRevisions(ns)).at(-1);
  const deployed = await Promise.all(
    names.map(async (n) => [`${ns}/${n}`, (await history(n, ns, bin)).at(-1)!.revision]),
  );
  expect(newest.releases.map((r: any) => [r.key, r.revision])).toEqual(deployed);
}

/** Seconds from the failing release's last log line (helm's error) to the summary ("release plan finished"). */
function rollbackSeconds(stdout: string, failed: string): number {
  const lines = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { time: number; msg: string; releaseKey?: string });
  const end = lines.find((l) => l.msg === 'release plan finished')!;
  const failure = lines.filter((l) => l.releaseKey === failed && l.time <= end.time).at(-1)!;
  return (end.time - failure.time) / 1000;
}

function figure(what: string, r: CliResult, failed: string): void {
  console.log(
    `figure: app rollback, ${what}: ${rollbackSeconds(r.stdout, failed).toFixed(2)} s from ${failed}'s failure to the summary`,
  );
}

/** The three-release app in a folder of its own, installed (app revision 1) with `extra`: its folder. */
async function abcInstalled(ns: string, extra: string[] = []): Promise<string> {
  const dir = appDir(ABC);
  await installed(dir, ns, extra);
  return dir;
}

/** The fixed version (no release failing) installed with `bin`: exit 0, every release at v2 in one app revision. */
async function fixedVersionInstalled(dir: string, ns: string, bin = helm4, extra: string[] = []): Promise<CliResult> {
  const fixed = await install(dir, ns, [...v2(['a', 'b', 'c'], undefined, bin), ...extra]);
  expect(fixed.exitCode, fixed.stderr).toBe(0);
  await expectOneAppRevision(ns, ['a', 'b', 'c'], 'v2', bin);
  return fixed;
}

const head = (done: number, failed: string, tail: string) =>
  `helm-installer FAILED (exit 4: helm operation failed): ${done} of 3 releases done, 1 failed${failed}; ${tail}`;
const BACK_TO_1 = 'app revision 2 failed; every release it changed went back: the app is at app revision 1';
const rolledBack = (ns: string, n: string, from: number, to: number, now: number) =>
  `  app rollback: ${ns}/${n}: rolled back from revision ${from} to ${to} (now revision ${now})`;
const rollbackLines = (lines: string[]) => lines.filter((l) => l.startsWith('  app rollback: '));

describe.concurrent('the app as one unit: a three-release app (b depends on a, c beside them), every failure', () => {
  for (const [major, bin] of [
    ['4', helm4],
    ['3', helm3],
  ] as const) {
    it(`helm ${major}: b, the middle of the chain, fails: a and c go back, exit 4; the fixed version is app revision 3`, async () => {
      const ns = await namespace(`abc-b-h${major}`);
      const dir = await abcInstalled(ns, ['--helm-bin', bin]);
      const run = await install(dir, ns, v2(['a', 'b', 'c'], 'b', bin));
      expect(run.exitCode, run.stderr).toBe(4);
      const lines = summary(run);
      expect(lines[0]).toBe(head(2, '', BACK_TO_1));
      expect(lines[2]).toMatch(
        new RegExp(`^  ${ns}/b: FAILED \\(exit 4\\) after [\\d.]+s: install/upgrade of release b failed: `),
      );
      expect(rollbackLines(lines)).toEqual([rolledBack(ns, 'c', 2, 1, 3), rolledBack(ns, 'a', 2, 1, 3)]);
      expect(run.termination.trimEnd()).toBe(lines.join('\n'));
      await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello', bin);
      expect((await appRevisions(ns)).map((r) => [r.revision, r.status, r.rolledBackTo])).toEqual([
        [1, 'deployed', undefined],
        [2, 'rolled back', 1],
      ]);
      figure(`helm ${major}, b fails, a and c rolled back`, run, `${ns}/b`);

      const fixed = await fixedVersionInstalled(dir, ns, bin);
      expect(summary(fixed)[0]).toMatch(
        /^helm-installer: release plan done, app revision 3 deployed: 3 of 3 releases done, [\d.]+s$/,
      );
    });
  }

  it('helm 4: a, the first release, fails: b never starts, c goes back; the fixed version is deployed', async () => {
    const ns = await namespace('abc-a');
    const dir = await abcInstalled(ns);
    const run = await install(dir, ns, v2(['a', 'b', 'c'], 'a'));
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(head(1, ', 1 not attempted', BACK_TO_1));
    expect(lines).toContain(`  ${ns}/b: not attempted (its dependency ${ns}/a was not deployed)`);
    expect(rollbackLines(lines)).toEqual([rolledBack(ns, 'c', 2, 1, 3)]);
    await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello');
    expect((await history('b', ns)).length).toBe(1);
    figure('helm 4, a fails, c rolled back', run, `${ns}/a`);

    await fixedVersionInstalled(dir, ns);
  });

  it('helm 4: c, the independent release, fails: b then a go back, dependents first', async () => {
    const ns = await namespace('abc-c');
    const dir = await abcInstalled(ns);
    const run = await install(dir, ns, v2(['a', 'b', 'c'], 'c'));
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(head(2, '', BACK_TO_1));
    expect(rollbackLines(lines)).toEqual([rolledBack(ns, 'b', 2, 1, 3), rolledBack(ns, 'a', 2, 1, 3)]);
    await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello');
    figure('helm 4, c fails, b and a rolled back', run, `${ns}/c`);

    await fixedVersionInstalled(dir, ns);
  });

  it("helm 4: the rollback itself fails (c's Lease held by another installer): exit 4 naming c and what is left to do; a later run takes c back from the inventory", async () => {
    const ns = await namespace('abc-lease');
    const dir = await abcInstalled(ns);
    const failing = [...v2(['a', 'b', 'c'], 'b'), '--lock-timeout', '3s'];
    const running = install(dir, ns, failing);
    // Once c is upgraded and this run let go of its Lease (b waits out its 10 s), another
    // installer takes it: a holder on another host that renewed it ten minutes ahead.
    const ahead = new Date(Date.now() + 600_000).toISOString().replace(/Z$/, '000Z');
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'helm-installer-c', namespace: ns },
      spec: {
        holderIdentity: 'other-installer/7/abcdef',
        leaseDurationSeconds: 15,
        acquireTime: ahead,
        renewTime: ahead,
      },
    };
    await waitForRelease(
      'c',
      ns,
      { status: 'deployed', revision: 2 },
      {
        also: {
          what: 'its Lease taken by another installer',
          probe: async () =>
            (await kubectl(['create', '-f', '-'], { ...opts(ns), input: JSON.stringify(lease), reject: false }))
              .exitCode === 0,
        },
        timeoutMs: 60_000,
        intervalMs: 100,
      },
    );
    const run = await running;
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(
      head(2, '', 'app revision 2 failed and going back to app revision 1 did not finish: see "app rollback" below'),
    );
    const [c, a] = rollbackLines(lines);
    expect(c).toMatch(
      new RegExp(
        `^  app rollback: ${ns}/c: NOT rolled back from revision 2 to 1; left to do: helm rollback c 1 -n ${ns}, or run the installer again \\(exit 7: release c is busy: installer other-installer/7/abcdef holds Lease ${ns}/helm-installer-c`,
      ),
    );
    expect(a).toBe(rolledBack(ns, 'a', 2, 1, 3));
    expect(run.termination.trimEnd()).toBe(lines.join('\n'));
    expect(await where(ns, ['a', 'b', 'c'])).toEqual({ a: 'hello deployed', b: 'hello deployed', c: 'v2 deployed' });
    expect((await appRevisions(ns)).map((r) => [r.revision, r.status, r.rolledBackTo])).toEqual([
      [1, 'deployed', undefined],
      [2, 'rollback failed', 1],
    ]);
    // The Events (and so the webhook) say the same, c's with what is left to do.
    const events = (await getJson(['get', 'events.events.k8s.io'], opts(ns))).items
      .filter((e: any) => e.reason === 'RolledBack')
      .map((e: any) => `${e.type} ${e.note}`);
    expect(events).toHaveLength(2);
    expect(events).toContain(
      `Warning release ${ns}/a: app revision 2 failed; the app goes back to app revision 1: rolled back from revision 2 to 1 (now revision 3)`,
    );
    expect(events.find((e: string) => e.includes(`${ns}/c:`))).toMatch(
      new RegExp(
        `^Warning release ${ns}/c: app revision 2 failed; the app goes back to app revision 1: NOT rolled back from revision 2 to 1; left to do: helm rollback c 1 -n ${ns}, or run the installer again \\(exit 7: release c is busy: `,
      ),
    );

    // The other installer is done. The same version again: c is already at it (unchanged, no new
    // revision), yet the app goes back to its last good revision, c with it.
    await kubectl(['delete', 'lease', 'helm-installer-c'], opts(ns));
    const again = await install(dir, ns, failing);
    expect(again.exitCode, again.stderr).toBe(4);
    expect(summary(again)[0]).toBe(
      head(2, '', 'app revision 3 failed; every release it changed went back: the app is at app revision 1'),
    );
    expect(rollbackLines(summary(again))).toEqual([rolledBack(ns, 'c', 2, 1, 3), rolledBack(ns, 'a', 4, 1, 5)]);
    await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello');
  });

  it('helm 3: the rollback itself fails (c froze a ConfigMap the old revision cannot be put back onto): exit 4 naming c and what is left to do; the next version, fixed, is deployed', async () => {
    const ns = await namespace('abc-frozen-h3');
    const dir = appDir(ABC, { 'frozen.yaml': FROZEN });
    await installed(dir, ns, ['--helm-bin', helm3]);
    const run = await install(dir, ns, [...v2(['a', 'b', 'c'], 'b', helm3), '--set', 'c:frozen=true']);
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(
      head(2, '', 'app revision 2 failed and going back to app revision 1 did not finish: see "app rollback" below'),
    );
    const [c, a] = rollbackLines(lines);
    expect(c).toMatch(
      new RegExp(
        `^  app rollback: ${ns}/c: NOT rolled back from revision 2 to 1; left to do: helm rollback c 1 -n ${ns}, or run the installer again \\(exit 4: rollback to revision 1 of release c failed: .*ConfigMap "c-frozen" is invalid: `,
      ),
    );
    expect(a).toBe(rolledBack(ns, 'a', 2, 1, 3));
    expect(run.termination.trimEnd()).toBe(lines.join('\n'));
    // helm recorded the failed rollback: c has no deployed revision, and it is half way: helm put
    // its other ConfigMap back, not the frozen one.
    expect(await where(ns, ['a', 'b', 'c'], helm3)).toEqual({
      a: 'hello deployed',
      b: 'hello deployed',
      c: 'hello failed',
    });
    expect((await getJson(['get', 'configmap', 'c-frozen'], opts(ns))).data.message).toBe('v2');
    const revisions = await appRevisions(ns);
    expect([
      revisions[1].revision,
      revisions[1].status,
      revisions[1].rolledBackTo,
      revisions[1].releases.map((r: any) => r.key),
    ]).toEqual([2, 'rollback failed', 1, [`${ns}/a`, `${ns}/b`]]);
    figure('helm 3, b fails, a rolled back, c cannot be', run, `${ns}/b`);

    // The old version cannot come back; the next one, fixed, goes forward from the inventory.
    const fixed = await fixedVersionInstalled(dir, ns, helm3, ['--set', 'c:frozen=true']);
    expect(summary(fixed)[0]).toMatch(
      /^helm-installer: release plan done, app revision 3 deployed: 3 of 3 releases done, [\d.]+s$/,
    );
    expect((await getJson(['get', 'configmap', 'c-frozen'], opts(ns))).data.message).toBe('v2');
  });

  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`helm 4: ${signal} during the app rollback: the next run ends with every release at one app revision, none lost`, async () => {
      const ns = await namespace(`abc-${signal.toLowerCase()}`);
      const dir = await abcInstalled(ns);
      const failing = v2(['a', 'b', 'c'], 'b');
      const run = spawnCli(['install', '--app-dir', dir, '--namespace', ns, ...failing]);
      // The first step of the rollback has begun (c's helm rollback is running or about to).
      const { result: stopped } = await killMidRun(
        run,
        run.logged(`app rollback: ${ns}/c back from revision 2`, 120_000),
        signal,
      );
      if (signal === 'SIGTERM') {
        // Stopped cleanly: helm's rollback of c interrupted, a's step not made, each named with
        // what is left to do; b's failure keeps the run's exit 4 (what a retry may mend).
        expect(stopped.exitCode, String(stopped.stderr)).toBe(4);
        const lines = summary({ stderr: String(stopped.stderr) });
        expect(lines[0]).toBe(
          head(
            2,
            '',
            'app revision 2 failed and going back to app revision 1 did not finish: see "app rollback" below',
          ),
        );
        expect(rollbackLines(lines).at(-1)).toMatch(
          new RegExp(
            `^  app rollback: ${ns}/a: NOT rolled back from revision 2 to 1; left to do: helm rollback a 1 -n ${ns}, or run the installer again \\(exit 5: .*interrupted.*\\)$`,
          ),
        );
        expect(await where(ns, ['a', 'b'])).toEqual({ a: 'v2 deployed', b: 'hello deployed' });
        expect((await appRevisions(ns)).map((r) => [r.revision, r.status])).toEqual([
          [1, 'deployed'],
          [2, 'rollback failed'],
        ]);
      } else {
        expect(stopped.signal).toBe('SIGKILL');
        // Killed before it recorded anything: the inventory still ends at app revision 1.
        expect((await appRevisions(ns)).map((r) => [r.revision, r.status])).toEqual([[1, 'deployed']]);
      }
      console.log(
        `${signal} during the app rollback: the cluster was left at ${JSON.stringify(await where(ns, ['a', 'b', 'c']))}`,
      );

      const next = await install(dir, ns, [...failing, '--lock-timeout', '90s']);
      expect(next.exitCode, next.stderr).toBe(4);
      const revision = signal === 'SIGTERM' ? 3 : 2;
      expect(summary(next)[0]).toBe(
        head(
          2,
          '',
          `app revision ${revision} failed; every release it changed went back: the app is at app revision 1`,
        ),
      );
      await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello');
    });
  }

  it("helm 4: a plan edited between runs (c renamed c2, d added, e someone else's): the failed revision records the plan as it is, the rollback touches only what the plan owns", async () => {
    const ns = await namespace('abc-edit');
    const dir = await abcInstalled(ns);
    // e: a release someone made with plain helm, which the edited plan now lists after b.
    const plain = await execa(
      helm4,
      ['install', 'e', join(dir, 'charts', 'part'), '--namespace', ns, '--set', 'message=theirs'],
      { env: { KUBECONFIG: kubeconfig() }, reject: false },
    );
    expect(plain.exitCode, plain.stderr).toBe(0);
    writePlan(dir, [
      { name: 'a' },
      { name: 'b', dependsOn: ['a'] },
      { name: 'c2' },
      { name: 'd', dependsOn: ['a'] },
      { name: 'e', dependsOn: ['b'] },
    ]);

    const run = await install(dir, ns, v2(['a', 'b', 'c2', 'd', 'e'], 'b'));
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(
      'helm-installer FAILED (exit 4: helm operation failed): 3 of 5 releases done, 1 failed, 1 not attempted; app revision 2 failed; every release it changed went back: the app is at app revision 1',
    );
    expect(lines).toContain(`  ${ns}/e: not attempted (its dependency ${ns}/b was not deployed)`);
    expect(rollbackLines(lines)).toEqual([
      `  app rollback: ${ns}/d: uninstalled (new in the failed app revision)`,
      `  app rollback: ${ns}/c2: uninstalled (new in the failed app revision)`,
      rolledBack(ns, 'a', 2, 1, 3),
    ]);
    // c, no longer in the plan, is left as the last good revision had it (not pruned: the run
    // failed); e, never this app's, is untouched; c2 and d are gone.
    expect(await where(ns, ['a', 'b', 'c', 'c2', 'd', 'e'])).toEqual({
      a: 'hello deployed',
      b: 'hello deployed',
      c: 'hello deployed',
      c2: 'absent',
      d: 'absent',
      e: 'theirs deployed',
    });
    // The failed revision records the edited plan: its releases as they are, e not (it is not this app's).
    const [, failed] = await appRevisions(ns);
    expect([failed.status, failed.releases.map((r: any) => r.key)]).toEqual(['rolled back', [`${ns}/a`, `${ns}/b`]]);
    // What the app has, for the next run: c (dropped, for a good run to prune), never e.
    const listed = JSON.parse(
      (await getJson(['get', 'configmap', 'helm-installer-abc-releases'], opts(ns))).data.releases,
    );
    expect(listed.map((e: any) => e.name)).toEqual(['a', 'b', 'c']);

    // The edit, fixed and e dropped again: app revision 3 deployed, c (this app's) pruned, e left alone.
    writePlan(dir, [{ name: 'a' }, { name: 'b', dependsOn: ['a'] }, { name: 'c2' }, { name: 'd', dependsOn: ['a'] }]);
    const fixed = await install(dir, ns, v2(['a', 'b', 'c2', 'd']));
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(summary(fixed).filter((l) => l.includes('no longer in the plan'))).toEqual([
      `  ${ns}/c: uninstalled (no longer in the plan)`,
    ]);
    expect(await where(ns, ['c', 'e'])).toEqual({ c: 'absent', e: 'theirs deployed' });
    await expectOneAppRevision(ns, ['a', 'b', 'c2', 'd'], 'v2');
  });

  it('helm 3: a first install that fails half way: everything it installed is uninstalled; the next run installs the app', async () => {
    const ns = await namespace('abc-first-h3');
    const dir = appDir(ABC);
    const run = await install(dir, ns, ['--set', 'b:stuck=true', '--timeout', '10s', '--helm-bin', helm3]);
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(
      head(
        2,
        '',
        'app revision 1 failed; every release it changed went back: the app is at where it was before its first install (nothing of it installed)',
      ),
    );
    expect(rollbackLines(lines)).toEqual([
      `  app rollback: ${ns}/c: uninstalled (new in the failed app revision)`,
      `  app rollback: ${ns}/a: uninstalled (new in the failed app revision)`,
    ]);
    expect(await where(ns, ['a', 'b', 'c'], helm3)).toEqual({ a: 'absent', b: 'absent', c: 'absent' });
    figure('helm 3, first install, b fails, c and a uninstalled', run, `${ns}/b`);

    const next = await install(dir, ns, ['--helm-bin', helm3]);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(summary(next)[0]).toMatch(
      /^helm-installer: release plan done, app revision 2 deployed: 3 of 3 releases done/,
    );
    await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello', helm3);
  });

  it('helm 4: --app-rollback never keeps each release where the run left it; a later run (on-failure) takes the app back from the inventory', async () => {
    const ns = await namespace('abc-never');
    const dir = await abcInstalled(ns);
    const failing = v2(['a', 'b', 'c'], 'b');
    const run = await install(dir, ns, [...failing, '--app-rollback', 'never']);
    expect(run.exitCode, run.stderr).toBe(4);
    const lines = summary(run);
    expect(lines[0]).toBe(head(2, '', 'app revision 2 failed; releases left as they are (--app-rollback never)'));
    expect(rollbackLines(lines)).toEqual([]);
    expect(await where(ns, ['a', 'b', 'c'])).toEqual({ a: 'v2 deployed', b: 'hello deployed', c: 'v2 deployed' });
    expect((await appRevisions(ns)).map((r) => [r.revision, r.status])).toEqual([
      [1, 'deployed'],
      [2, 'failed'],
    ]);

    // a and c are already at this version (no new revision), yet not at the app's last good one.
    const again = await install(dir, ns, failing);
    expect(again.exitCode, again.stderr).toBe(4);
    expect(rollbackLines(summary(again))).toEqual([rolledBack(ns, 'c', 2, 1, 3), rolledBack(ns, 'a', 2, 1, 3)]);
    await expectOneAppRevision(ns, ['a', 'b', 'c'], 'hello');
  });
});
