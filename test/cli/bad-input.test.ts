// Bad input, through the built CLI: a documented exit code, a message naming what to fix, and
// helm upgrade never started. A spy wrapper around the REAL helm records every helm call.
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tar from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { appDir, chartDir, helm4, runCli, tempDir } from '../helpers.js';

const dir = tempDir('bad-input');
const spyLog = join(dir, 'helm-calls.log');
const spy = join(dir, 'helm-spy');
// A cluster address nothing listens on: if an upgrade ever started it would fail with exit 5.
const kubeconfig = join(dir, 'kubeconfig');
// The storefront chart alone: the bundled app is a release plan (test/cli/release-plan.test.ts).
const env = { HELM_BIN: spy, KUBECONFIG: kubeconfig, HELM_INSTALLER_CHART: chartDir };

function helmCalls(): string[] {
  return existsSync(spyLog) ? readFileSync(spyLog, 'utf8').trim().split('\n').filter(Boolean) : [];
}

beforeAll(() => {
  writeFileSync(spy, `#!/bin/sh\necho "$*" >> '${spyLog}'\nexec '${helm4}' "$@"\n`);
  chmodSync(spy, 0o755);
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
  );
});

async function expectRefused(args: string[], code: number, ...mentions: (string | RegExp)[]) {
  const before = helmCalls().length;
  const r = await runCli(['install', ...args], { env });
  expect(r.exitCode, r.stderr).toBe(code);
  for (const m of mentions) expect(r.stderr).toMatch(m);
  expect(r.stderr).toMatch(/^next: /m);
  expect(
    helmCalls()
      .slice(before)
      .filter((c) => c.startsWith('upgrade')),
  ).toEqual([]);
  return r;
}

function packChart(name: string, extra: (root: string) => string[], opts: { preservePaths?: boolean } = {}): string {
  const root = tempDir('chart');
  mkdirSync(join(root, 'work', name, 'templates'), { recursive: true });
  writeFileSync(join(root, 'work', name, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`);
  const entries = [`${name}/Chart.yaml`, ...extra(root)];
  const file = join(root, `${name}.tgz`);
  tar.c({ gzip: true, file, cwd: join(root, 'work'), sync: true, preservePaths: opts.preservePaths ?? false }, entries);
  return file;
}

describe('bad input is refused before helm upgrade starts', () => {
  it('malformed YAML in a values file names the file and the line (exit 3)', async () => {
    const f = join(dir, 'broken.yaml');
    writeFileSync(f, 'web:\n  replicaCount: 2\n  hostname: [shop.example\nother: 1\n');
    await expectRefused(['--values', f], 3, /broken\.yaml:\d+/, /invalid YAML/);
  });

  it('a values file whose top level is a list (exit 3)', async () => {
    const f = join(dir, 'list.yaml');
    writeFileSync(f, '- web\n- db\n');
    await expectRefused(['--values', f], 3, /list\.yaml:1: the top level of a values file must be a map/);
  });

  it('a bad app slug, from the flag or the env var: exit 2 naming both, before helm runs', async () => {
    await expectRefused(['--app-slug', 'Acme Shop'], 2, /--app-slug/, /HELM_INSTALLER_APP_SLUG/, /KOTS app slug/);
    const before = helmCalls().length;
    const r = await runCli(['install'], { env: { ...env, HELM_INSTALLER_APP_SLUG: 'acme_shop' } });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/invalid HELM_INSTALLER_APP_SLUG="acme_shop" \(env for --app-slug\)/);
    expect(helmCalls().slice(before)).toEqual([]);
  });

  it('a bad --set expression (exit 2)', async () => {
    await expectRefused(['--set', 'web.replicaCount'], 2, /--set/, /has no value/);
  });

  it('a value the chart schema refuses (exit 3)', async () => {
    await expectRefused(['--set', 'web.replicaCount=many'], 3, /schema/, /replicaCount/);
  });

  it('a missing chart (exit 3)', async () => {
    await expectRefused(['--chart', join(dir, 'nope.tgz')], 3, /chart not found: .*nope\.tgz/);
  });

  it('a missing values path (exit 3)', async () => {
    await expectRefused(
      ['--values', join(dir, 'configmap-not-mounted')],
      3,
      /values path not found: .*configmap-not-mounted/,
    );
  });

  it('a chart archive with .. in a path (exit 3)', async () => {
    const file = packChart(
      'dots',
      (root) => {
        writeFileSync(join(root, 'evil.txt'), 'x');
        return ['../evil.txt'];
      },
      { preservePaths: true },
    );
    await expectRefused(['--chart', file], 3, /unsafe chart archive/, /path with \.\./);
  });

  it('a chart archive with an absolute path (exit 3)', async () => {
    const file = packChart(
      'abs',
      (root) => {
        writeFileSync(join(root, 'abs.txt'), 'x');
        return [join(root, 'abs.txt')];
      },
      { preservePaths: true },
    );
    await expectRefused(['--chart', file], 3, /unsafe chart archive/, /absolute path/);
  });

  it('a chart archive with a link escaping the chart (exit 3)', async () => {
    const file = packChart('link', (root) => {
      symlinkSync('../../../../etc/passwd', join(root, 'work', 'link', 'templates', 'passwd.yaml'));
      return ['link/templates/passwd.yaml'];
    });
    await expectRefused(['--chart', file], 3, /unsafe chart archive/, /escapes the chart/);
  });

  it('a bad --timeout, from the environment as a Job sets it (exit 2), names the env var and the flag', async () => {
    const r = await runCli(['install'], { env: { ...env, HELM_INSTALLER_TIMEOUT: 'soon' } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('invalid HELM_INSTALLER_TIMEOUT="soon" (env for --timeout): expected a duration');
    expect(helmCalls().filter((c) => c.startsWith('upgrade'))).toEqual([]);
  });

  it('--pull-secret-file and --registry-ca-file are read with the other options: each bad one exit 2 naming flag and env var, no helm run, no secret echoed', async () => {
    const garbled = join(dir, 'pull-secret-garbled.json');
    writeFileSync(
      garbled,
      '{"auths": {"registry.local:5000": {"auth": "Tm90LUEtUGFpcg=="}}, "note": "Hunter2-Pull-Secret"',
    );
    const list = join(dir, 'pull-secret-list.json');
    writeFileSync(list, '["Hunter2-Pull-Secret"]');
    const noAuths = join(dir, 'pull-secret-auths-list.json');
    writeFileSync(noAuths, '{"auths": ["Hunter2-Pull-Secret"]}');
    const notPem = join(dir, 'ca.pem');
    writeFileSync(notPem, 'this is the CA, honest\n');
    const before = helmCalls().length;
    const r = await runCli(
      [
        'install',
        '--registry-ca-file',
        notPem,
        '--pull-secret-file',
        join(dir, 'no-such-pull-secret'),
        '--timeout',
        'soon',
      ],
      { env },
    );
    expect(r.exitCode, r.stderr).toBe(2);
    // All at once, with the rest of the options.
    expect(r.stderr).toContain('invalid --timeout "soon" (or env HELM_INSTALLER_TIMEOUT)');
    expect(r.stderr).toContain(
      `invalid --registry-ca-file "${notPem}" (or env HELM_INSTALLER_REGISTRY_CA_FILE): the registry CA file ${notPem} holds no PEM certificate`,
    );
    expect(r.stderr).toContain(
      `invalid --pull-secret-file "${join(dir, 'no-such-pull-secret')}" (or env HELM_INSTALLER_PULL_SECRET_FILE): cannot read the pull secret file ${join(dir, 'no-such-pull-secret')}: ENOENT`,
    );
    for (const [file, why] of [
      [garbled, 'is not valid JSON'],
      [list, 'is not a JSON object'],
      [noAuths, 'has no "auths" map'],
    ] as const) {
      const fromEnv = await runCli(['install'], { env: { ...env, HELM_INSTALLER_PULL_SECRET_FILE: file } });
      expect(fromEnv.exitCode, fromEnv.stderr).toBe(2);
      expect(fromEnv.stderr).toContain(
        `invalid HELM_INSTALLER_PULL_SECRET_FILE="${file}" (env for --pull-secret-file): The pull secret's .dockerconfigjson ${why}`,
      );
      expect(`${fromEnv.stdout}${fromEnv.stderr}`).not.toContain('Hunter2');
    }
    // Before any work: not even helm's version was asked.
    expect(helmCalls().slice(before)).toEqual([]);
  });

  it('an unknown option (exit 2)', async () => {
    const r = await runCli(['install', '--bogus'], { env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("unknown option '--bogus'");
  });

  it('usage errors leave a termination message, and the log ends with the summary, not the help text', async () => {
    for (const [args, extraEnv, cause] of [
      [
        ['install'],
        { HELM_INSTALLER_TIMEOUT: 'soon' },
        'cause: invalid HELM_INSTALLER_TIMEOUT="soon" (env for --timeout)',
      ],
      [['install', '--bogus'], {}, "cause: unknown option '--bogus'"],
      [[], {}, 'cause: no command given'],
      [
        ['install', '--termination-log', join(dir, 'from-flag'), '--history-max', 'x'],
        {},
        'cause: invalid --history-max "x" (or env HELM_INSTALLER_HISTORY_MAX)',
      ],
    ] as const) {
      const termination = join(dir, `usage-termination-${Math.random()}`);
      writeFileSync(termination, '');
      const fromFlag = (args as readonly string[]).includes('--termination-log');
      const r = await runCli([...args], { env: { ...env, ...extraEnv, HELM_INSTALLER_TERMINATION_LOG: termination } });
      expect(r.exitCode).toBe(2);
      const message = readFileSync(fromFlag ? join(dir, 'from-flag') : termination, 'utf8');
      expect(message).toMatch(/^helm-installer FAILED \(exit 2: usage error\)\n/);
      expect(message).toContain(cause);
      expect(message).toMatch(/^next: /m);
      expect(r.stderr).not.toContain('Usage:');
      expect(r.stderr.trimEnd().endsWith(message.trimEnd())).toBe(true);
    }
  });
});

describe('edges that are fine or have their own error', () => {
  it('an empty values directory is fine', async () => {
    const empty = join(dir, 'empty-configmap');
    mkdirSync(empty);
    const r = await runCli(['values', '--values', empty, '-o', 'json'], { env });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('web');
  });

  it('helm missing is its own error (exit 1), not a helm failure', async () => {
    const r = await runCli(['install', '--helm-bin', join(dir, 'no-such-helm')], { env: { KUBECONFIG: kubeconfig } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/helm not found: cannot run .*no-such-helm \(ENOENT\)/);
    expect(r.stderr).toMatch(/next: Install helm/);
  });

  it('a KUBECONFIG naming a missing file is a setting to fix (exit 2, naming it), not an internal error', async () => {
    const before = helmCalls().length;
    const r = await runCli(['install'], { env: { HELM_BIN: spy, KUBECONFIG: join(dir, 'no-such-kubeconfig') } });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `cannot load the cluster configuration from KUBECONFIG=${join(dir, 'no-such-kubeconfig')}`,
    );
    expect(r.stderr).toMatch(/^next: Point KUBECONFIG at a readable kubeconfig file/m);
    expect(
      helmCalls()
        .slice(before)
        .filter((c) => c.startsWith('upgrade')),
    ).toEqual([]);
  });

  it('no kubeconfig at all and no service account is a setting to fix (exit 2, naming KUBECONFIG), not an internal error', async () => {
    const home = join(dir, 'home-without-kube');
    mkdirSync(home, { recursive: true });
    const before = helmCalls().length;
    const r = await runCli(['install'], { env: { HELM_BIN: spy, KUBECONFIG: '', HOME: home } });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'cause: no cluster configuration: KUBECONFIG is unset, ~/.kube/config does not exist and this is not a pod with a service account',
    );
    expect(r.stderr).toMatch(/^next: Set KUBECONFIG to the kubeconfig of the target cluster/m);
    expect(
      helmCalls()
        .slice(before)
        .filter((c) => c.startsWith('upgrade')),
    ).toEqual([]);
  });

  it('an unreachable cluster is retried up to --connect-timeout, then exit 5, with the summary last and in the termination file, secrets masked', async () => {
    const secretValues = join(dir, 'secret.yaml');
    writeFileSync(secretValues, 'database:\n  password: "Xyzzy-Secret-42"\n');
    const termination = join(dir, 'termination-log');
    writeFileSync(termination, '');
    const r = await runCli(
      [
        'install',
        '--app-dir',
        appDir,
        '--values',
        secretValues,
        '--set',
        'database.password=Other-Secret-77',
        '--log-level',
        'debug',
      ],
      { env: { ...env, HELM_INSTALLER_TERMINATION_LOG: termination, HELM_INSTALLER_CONNECT_TIMEOUT: '3s' } },
    );
    expect(r.exitCode).toBe(5);
    // Retried with backoff (logged), then given up at the bound; helm upgrade never started.
    const retries = r.stdout.split('\n').filter((l) => l.includes('API server not reachable yet, retrying'));
    expect(retries.length).toBeGreaterThanOrEqual(2);
    expect(helmCalls().filter((c) => c.startsWith('upgrade'))).toEqual([]);
    const message = readFileSync(termination, 'utf8');
    expect(message).toMatch(/^helm-installer FAILED \(exit 5/);
    expect(message).toContain('release: storefront');
    expect(message).toMatch(/cluster unreachable|connection refused/);
    expect(Buffer.byteLength(message)).toBeLessThan(2048);
    // The last lines of the log (what the kubelet falls back to) are the same summary.
    expect(r.stderr.trimEnd().endsWith(message.trimEnd())).toBe(true);
    for (const out of [r.stdout, r.stderr, message]) {
      expect(out).not.toContain('Xyzzy-Secret-42');
      expect(out).not.toContain('Other-Secret-77');
    }
    // JSON log lines on stdout, each a whole object.
    for (const line of r.stdout.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();
    expect(r.stdout).toContain('database.password=[REDACTED]');
  });

  it('boolean env vars mean what they say: HELM_INSTALLER_SHOW_SECRETS=false masks, =true shows, =maybe is exit 2', async () => {
    const args = ['values', '--app-dir', appDir, '--set', 'database.password=Plain-Show-4242', '-o', 'json'];
    for (const [value, shown] of [
      ['false', false],
      ['0', false],
      ['no', false],
      ['', false],
      ['true', true],
      ['1', true],
    ] as const) {
      const r = await runCli(args, { env: { ...env, HELM_INSTALLER_SHOW_SECRETS: value } });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).database.password).toBe(shown ? 'Plain-Show-4242' : '[REDACTED]');
    }
    const bad = await runCli(args, { env: { ...env, HELM_INSTALLER_SHOW_SECRETS: 'maybe' } });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain(
      'invalid HELM_INSTALLER_SHOW_SECRETS="maybe" (env for --show-secrets): expected true or false',
    );
  });

  it('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(chartDir, '..', '..', 'package.json'), 'utf8')).version);
  });
});
