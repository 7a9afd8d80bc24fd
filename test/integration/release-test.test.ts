// `install --test` (issue 22, item 3) through the built CLI, on helm 4 and helm 3, with the
// release-test fixture chart: its test Pod passes or fails on the KWOK node (a pod phase KWOK is
// told by annotation), never ends there (--test-timeout), or runs a program on the real node that
// prints lines and exits 3 (its exit code and log lines named in the summary). What helm did is
// read from helm's own history and the cluster, not from the installer's words.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { getJson, KWOK_PHASE_ANNOTATION } from '../cluster/kube.js';
import { appDir, helm3, helm4, repoRoot, tempDir } from '../helpers.js';
import { history, install, installerEvents, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { serviceAccountsDeletedAfterAll, shippedRole, type Rule } from './service-account.js';
import { sayAndExitImage, valuesFile } from './wait-causes.js';

const chart = join(repoRoot, 'test/fixtures/charts/release-test');
const registry = inject('registry');
const newNamespace = namespacesDeletedAfterAll();
const identity = serviceAccountsDeletedAfterAll();

/** The CLI on the fixture chart, its termination message read back. */
async function run(bin: string, ns: string, args: string[]) {
  const termination = join(tempDir('release-test'), 'termination-log');
  writeFileSync(termination, '');
  const r = await install('shop', ns, ['--chart', chart, '--helm-bin', bin, ...args], {
    HELM_INSTALLER_TERMINATION_LOG: termination,
  });
  const logs = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string });
  return { ...r, termination: readFileSync(termination, 'utf8'), messages: logs.map((l) => l.msg) };
}

const statuses = async (ns: string, bin: string) =>
  (await history('shop', ns, bin)).map((h) => [h.revision, h.status, h.description]);
const settings = async (ns: string) =>
  (await getJson(['get', 'configmap', 'shop-settings'], { kubeconfig: kubeconfig(), namespace: ns })).data.version;

for (const [name, bin] of [
  ['helm 4', helm4],
  ['helm 3', helm3],
] as const) {
  const tag = name.replace(' ', '');
  describe.concurrent(`install --test on ${name}`, () => {
    it('passing tests: exit 0 and the new revision stays; an unchanged redeploy tests nothing', async () => {
      const ns = await newNamespace(`test-pass-${tag}`);
      const first = await run(bin, ns, ['--test']);
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.messages).toContain('tests passed (1)');
      const second = await run(bin, ns, ['--test', '--set', 'version=2']);
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.messages).toContain('tests passed (1)');
      expect(await statuses(ns, bin)).toEqual([
        [1, 'superseded', 'Install complete'],
        [2, 'deployed', 'Upgrade complete'],
      ]);
      const test = await getJson(['get', 'pod', 'shop-test'], { kubeconfig: kubeconfig(), namespace: ns });
      expect(test.status.phase).toBe('Succeeded');
      const again = await run(bin, ns, ['--test', '--set', 'version=2']);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.messages).not.toContain('running helm test');
      expect(
        (await getJson(['get', 'pod', 'shop-test'], { kubeconfig: kubeconfig(), namespace: ns })).metadata.uid,
      ).toBe(test.metadata.uid);
    });

    it('a test that fails on an upgrade (real node): exit 4 naming the pod, its exit code and last log lines; rolled back to the previous revision', async () => {
      const ns = await newNamespace(`test-upg-${tag}`);
      expect((await run(bin, ns, [])).exitCode).toBe(0);
      const image = await sayAndExitImage(registry, randomBytes(4).toString('hex'));
      const said = ['GET http://shop-web/ -> 503', 'checkout page missing'];
      const failing = valuesFile({ version: '2', test: { image, realNode: true, args: ['3', ...said] } });
      const r = await run(bin, ns, ['--test', '-f', failing]);
      expect(r.exitCode, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/^helm-installer FAILED \(exit 4: helm operation failed\)$/m);
      expect(r.stderr).toMatch(/^cause: helm test of release shop revision 2 failed; rolled back to revision 1$/m);
      const lines = r.stderr.split('\n');
      const at = lines.indexOf('Pod/shop-test: Error: container check exited 3');
      expect(at, r.stderr).toBeGreaterThan(0);
      expect(lines.slice(at + 1, at + 3)).toEqual(said.map((l) => `  | ${l}`));
      expect(r.termination).toContain('Pod/shop-test: Error: container check exited 3');
      expect(await statuses(ns, bin)).toEqual([
        [1, 'superseded', 'Install complete'],
        [2, 'superseded', 'Upgrade complete'],
        [3, 'deployed', 'Rollback to 1'],
      ]);
      expect(await settings(ns)).toBe('1');
    });

    it('a test that fails on a first install: exit 4, uninstalled, no release left', async () => {
      const ns = await newNamespace(`test-first-${tag}`);
      const r = await run(bin, ns, ['--test', '--set', 'test.kwokPhase=Failed']);
      expect(r.exitCode, r.stderr).toBe(4);
      expect(r.stderr).toMatch(
        /^cause: helm test of release shop revision 1 failed; uninstalled \(it was a first install\)$/m,
      );
      expect(r.stderr).toContain(
        `\nPod/shop-test: Error: container check exited 1: failed on purpose (${KWOK_PHASE_ANNOTATION}: Failed)\n`,
      );
      expect(await history('shop', ns, bin)).toEqual([]);
    });

    it('--test-failure keep: exit 4, the release stays at the new revision', async () => {
      const ns = await newNamespace(`test-keep-${tag}`);
      expect((await run(bin, ns, [])).exitCode).toBe(0);
      const r = await run(bin, ns, [
        '--test',
        '--test-failure',
        'keep',
        '--set',
        'version=2',
        '--set',
        'test.kwokPhase=Failed',
      ]);
      expect(r.exitCode, r.stderr).toBe(4);
      expect(r.stderr).toMatch(
        /^cause: helm test of release shop revision 2 failed; kept at revision 2 \(--test-failure keep\)$/m,
      );
      expect(r.stderr).toContain('\nPod/shop-test: Error: container check exited 1');
      expect(await statuses(ns, bin)).toEqual([
        [1, 'superseded', 'Install complete'],
        [2, 'deployed', 'Upgrade complete'],
      ]);
      expect(await settings(ns)).toBe('2');
      // Told as a test failure (Warning), not as a second, generic failure.
      expect((await installerEvents(ns)).map((e) => [e.reason, e.type, e.note])).toEqual([
        ['Installed', 'Normal', `release ${ns}/shop: installed as revision 1 (chart release-test-0.1.0)`],
        [
          'TestFailed',
          'Warning',
          `release ${ns}/shop: test Pod/shop-test Error: container check exited 1: failed on purpose (helm-installer.test/kwok-phase: Failed); kept at revision 2 (--test-failure keep)`,
        ],
      ]);
    });

    it('a test still running at --test-timeout: failed as a timeout, the pod deleted, the first install removed', async () => {
      const ns = await newNamespace(`test-slow-${tag}`);
      const r = await run(bin, ns, ['--test', '--test-timeout', '5s', '--set', 'test.kwokPhase=Running']);
      expect(r.exitCode, r.stderr).toBe(4);
      expect(r.stderr).toMatch(
        /^cause: helm test of release shop revision 1 timed out \(--test-timeout 5s\); uninstalled \(it was a first install\)$/m,
      );
      expect(r.stderr).toContain('\nPod/shop-test: TestTimeout: still Running when --test-timeout 5s ran out\n');
      expect(r.stderr).toMatch(/^next: .*--test-timeout \(HELM_INSTALLER_TEST_TIMEOUT\)/m);
      expect(await history('shop', ns, bin)).toEqual([]);
      const pods = await getJson<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>(
        ['get', 'pods'],
        { kubeconfig: kubeconfig(), namespace: ns },
      );
      expect(pods.items.filter((p) => !p.metadata.deletionTimestamp)).toEqual([]);
    });
  });
}

describe('the test pod airgapped', () => {
  it("helm 4 post-renders test hooks: with --registry the test pod runs the image's local name", async () => {
    const ns = await newNamespace('test-airgap');
    // --skip-preflight: the fixture's image is not in the registry; KWOK runs nothing anyway.
    const r = await run(helm4, ns, ['--test', '--registry', `${registry}/acme`, '--skip-preflight']);
    expect(r.exitCode, r.stderr).toBe(0);
    const test = await getJson(['get', 'pod', 'shop-test'], { kubeconfig: kubeconfig(), namespace: ns });
    expect([test.spec.containers[0].image, test.status.phase]).toEqual([`${registry}/acme/test:1.0`, 'Succeeded']);
  });
});

describe('the bundled chart', () => {
  it("its web test (tests.enabled) runs after the install: the test pod fetches the web Service's / (Succeeded on the KWOK node)", async () => {
    const ns = await newNamespace('test-storefront');
    const termination = join(tempDir('release-test'), 'termination-log');
    const r = await install(
      'storefront',
      ns,
      ['--values', join(appDir, 'examples', 'customer-values.yaml'), '--set', 'tests.enabled=true', '--test'],
      {
        HELM_INSTALLER_TERMINATION_LOG: termination,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('"msg":"tests passed (1)"');
    const test = await getJson(['get', 'pod', 'storefront-test-web'], { kubeconfig: kubeconfig(), namespace: ns });
    expect(test.spec.containers[0].command).toEqual(['wget', '-q', '-O-', '-T', '10', 'http://storefront-web:80/']);
    expect(test.status.phase).toBe('Succeeded');
  });
});

describe("the bundled chart's test as the installer's ServiceAccount", () => {
  const customer = join(appDir, 'examples', 'customer-values.yaml');
  const args = ['--values', customer, '--set', 'tests.enabled=true', '--test'];

  it('the shipped Role is enough: helm test creates the test Pod and the release stays', async () => {
    const ns = await newNamespace('test-sa');
    const r = await install('storefront', ns, args, { KUBECONFIG: await identity(ns, shippedRole.rules) });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('"msg":"tests passed (1)"');
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([[1, 'deployed']]);
  });

  it("a Role without the test Pod's verbs: exit 6 naming them before helm starts", async () => {
    const ns = await newNamespace('test-sa-narrow');
    const rules = shippedRole.rules.filter((r: Rule) => !(r.resources.length === 1 && r.resources[0] === 'pods'));
    expect(rules).toHaveLength(shippedRole.rules.length - 1);
    const r = await install('storefront', ns, args, { KUBECONFIG: await identity(ns, rules) });
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toContain(`\n  pods in namespace ${ns}: create, delete, patch (Pod/storefront-test-web)\n`);
    expect(await history('storefront', ns)).toEqual([]);
  });
});
