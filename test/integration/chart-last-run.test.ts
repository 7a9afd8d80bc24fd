// A one-chart install (`install --chart`, no release plan) leaves the same last-run ConfigMap a plan's
// run leaves (src/releases/chart-last-run.ts -> last-run.ts): the exit code, its meaning, the cause
// and the next step, masked; and the SupportBundle `troubleshoot-specs --chart` writes finds it and
// says so (Troubleshoot's own support-bundle CLI). The chart's render fails quoting its password.
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createNamespace, deleteNamespace, getJson } from '../cluster/kube.js';
import { ensureTroubleshootBinaries, runSupportBundle, type TroubleshootPaths } from '../cluster/troubleshoot.js';
import { repoRoot, runCli, tempDir } from '../helpers.js';

const kubeconfig = inject('kubeconfig');
const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'last-run-refused');
const SECRET = 'hunter2-last-run-secret';
const GOOD = 'long-enough-password';
const CONFIGMAP = 'helm-installer-last-run-refused-last-run';
let binaries: TroubleshootPaths;
let ns: string;

beforeAll(async () => {
  binaries = await ensureTroubleshootBinaries((line) => process.stderr.write(`[troubleshoot] ${line}\n`));
  ns = await createNamespace('chart-last-run', { kubeconfig });
}, 60 * 60_000);

afterAll(async () => {
  if (ns) await deleteNamespace(ns, { kubeconfig });
});

const install = (password: string) =>
  runCli(['install', '--chart', chart, '--namespace', ns, '--set', `auth.password=${password}`], {
    env: { KUBECONFIG: kubeconfig },
  });
const lastRun = async (): Promise<Record<string, string>> =>
  (await getJson(['get', 'configmap', CONFIGMAP], { kubeconfig, namespace: ns })).data;

describe('the last run of a one-chart install, for the support bundle', () => {
  it('a failed install leaves exit code, meaning, cause and next, the password masked; the SupportBundle reports it', async () => {
    const r = await install(SECRET);
    expect(r.exitCode, r.stderr).toBe(3);
    const data = await lastRun();
    expect(data.exitCode).toBe('3');
    expect(data.meaning).toBe('invalid input'); // the README's exit-code table
    expect(data.cause).toBe(
      `${ns}/last-run-refused: rendering of release last-run-refused failed: execution error at (last-run-refused/templates/settings.yaml:2:4): auth.password "[REDACTED]" is refused: ask the vendor for the expected one`,
    );
    expect(data.next).toMatch(/^Fix the values named above/);
    expect(data.appRevision).toBe('');
    expect(data.summary).toMatch(
      /^helm-installer FAILED \(exit 3: invalid input\)\nrelease: last-run-refused {2}namespace: /,
    );
    expect(JSON.stringify(await getJson(['get', 'configmap', CONFIGMAP], { kubeconfig, namespace: ns }))).not.toContain(
      SECRET,
    );

    // The SupportBundle of the same chart looks for the same ConfigMap (the app of one chart is its release).
    const specs = await runCli(
      [
        'troubleshoot-specs',
        '--format',
        'plain',
        '--chart',
        chart,
        '--namespace',
        ns,
        '--set',
        `auth.password=${GOOD}`,
      ],
      { env: { KUBECONFIG: kubeconfig } },
    );
    expect(specs.exitCode, specs.stderr).toBe(0);
    const dir = tempDir('chart-last-run');
    writeFileSync(join(dir, 'specs.yaml'), `${specs.stdout}\n`);
    const bundle = await runSupportBundle(binaries.supportBundle, join(dir, 'specs.yaml'), kubeconfig, dir);
    expect(bundle.exitCode, bundle.stderr.slice(-3000)).toBe(0);
    const installer = bundle.results.find((x) => x.title === 'The installer');
    expect(installer?.severity).toBe('error');
    expect(installer?.message).toBe(
      `The installer failed with exit 3 (invalid input): ${data.cause!.replace(/"/g, '\\"')} Next: ${data.next}`,
    );
    await execa('tar', ['-xzf', bundle.archive, '-C', dir]);
    const grep = await execa('grep', ['-rl', SECRET, dir, '--exclude=*.tar.gz'], { reject: false });
    expect(grep.stdout).toBe('');
  }, 300_000);

  it('the next, successful install overwrites it with exit 0 and no cause', async () => {
    const r = await install(GOOD);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await lastRun()).toEqual({
      exitCode: '0',
      meaning: 'success',
      cause: '',
      next: '',
      appRevision: '',
      summary: `Installed ${ns}/last-run-refused: installed as revision 1 (chart last-run-refused-0.1.0)`,
    });
  }, 300_000);
});
