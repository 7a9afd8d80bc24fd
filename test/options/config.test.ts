import { describe, expect, it } from 'vitest';
import {
  commonOptionTable,
  parseAppSlug,
  parseHistoryMax,
  parseNamespace,
  parseRegistry,
  parseReleaseName,
  parseTimeout,
  splitLines,
  splitPathList,
} from '../../src/options/config.js';
import { installOptionTable } from '../../src/cli/commands/install-options.js';
import { OptionValueError } from '../../src/common/errors.js';
import { ExitCode } from '../../src/common/exit-codes.js';
import { clientRateArgs, upgradeInstallArgs } from '../../src/helm/helm-args.js';
import { parseHelmVersion } from '../../src/helm/helm-binary.js';
import { parseBoolean, resolveOptions, unknownEnvVars, type GivenValue } from '../../src/options/options.js';
import { MASK, SecretRegistry } from '../../src/common/secrets.js';
import { helmTraits } from '../../src/helm/helm-traits.js';

describe('option parsers', () => {
  it('accepts Go durations and rejects the rest', () => {
    for (const t of ['300s', '10m', '1h30m', '1.5h', '500ms']) expect(parseTimeout(t)).toBe(t);
    for (const t of ['5', '5x', '', 'ten minutes', '-5m']) expect(() => parseTimeout(t)).toThrow(OptionValueError);
  });
  it('validates history-max, release, namespace and registry', () => {
    expect(parseHistoryMax('0')).toBe(0);
    expect(() => parseHistoryMax('-1')).toThrow(/whole number/);
    expect(() => parseHistoryMax('')).toThrow(/whole number/);
    expect(parseReleaseName('storefront-prod')).toBe('storefront-prod');
    expect(() => parseReleaseName('Storefront_Prod')).toThrow(/release name/);
    expect(() => parseReleaseName('a'.repeat(54))).toThrow(/53/);
    expect(parseNamespace('shop-prod')).toBe('shop-prod');
    for (const ns of ['Shop', 'a.b', '-a', 'a'.repeat(64), ''])
      expect(() => parseNamespace(ns)).toThrow(/namespace name/);
    expect(parseRegistry('Registry.Local:5000/app/')).toBe('registry.local:5000/app');
    expect(() => parseRegistry('https://registry.local')).toThrow(/scheme/);
  });
  it('takes a KOTS app slug (what gosimple/slug makes) and refuses anything KOTS could never match', () => {
    for (const slug of ['storefront', 'acme-shop-2', '1234', 'a']) expect(parseAppSlug(slug)).toBe(slug);
    for (const bad of ['Storefront', 'acme shop', '-a', 'a-', 'a_b', 'a'.repeat(254), ''])
      expect(() => parseAppSlug(bad)).toThrow(/KOTS app slug/);
  });
  it('reads booleans the way people write them in env', () => {
    for (const v of ['true', 'TRUE', '1', 'yes', 'on']) expect(parseBoolean(v)).toBe(true);
    for (const v of ['false', 'False', '0', 'no', 'off', '', ' ']) expect(parseBoolean(v)).toBe(false);
    for (const v of ['maybe', '2', 'y']) expect(() => parseBoolean(v)).toThrow(OptionValueError);
  });
  it('splits environment lists', () => {
    expect(splitPathList('/a.yaml:/b:')).toEqual(['/a.yaml', '/b']);
    expect(splitLines('a=1,b=2\n c=3 \n')).toEqual(['a=1,b=2', 'c=3']);
  });
});

describe('resolving options: flag, else env, else default, by the same parsers', () => {
  const resolve = (given: Record<string, GivenValue>, env: Record<string, string>, secrets = new SecretRegistry()) =>
    resolveOptions(installOptionTable, { given, env, ctx: { secrets } });

  it('a switch set to false in the env is off; true is on; the flag wins', () => {
    expect(resolve({}, { HELM_INSTALLER_DRY_RUN: 'false' }).dryRun).toBe(false);
    expect(resolve({}, { HELM_INSTALLER_DRY_RUN: '' }).dryRun).toBe(false);
    expect(resolve({}, { HELM_INSTALLER_DRY_RUN: 'yes' }).dryRun).toBe(true);
    expect(resolve({ dryRun: true }, { HELM_INSTALLER_DRY_RUN: 'false' }).dryRun).toBe(true);
  });

  it('defaults, env values parsed to their types, an empty env value as unset', () => {
    const o = resolve(
      {},
      { HELM_INSTALLER_HISTORY_MAX: '7', HELM_INSTALLER_NAMESPACE: '', HELM_INSTALLER_VALUES: '/a.yaml:/b' },
    );
    expect(o.historyMax).toBe(7);
    expect(o.timeout).toBe('10m');
    expect(o.namespace).toBeUndefined();
    expect(o.values).toEqual(['/a.yaml', '/b']);
    expect(o.baseValues).toBeUndefined();
    expect(o.takeOwnership).toBe('first-install');
  });

  it('every error names the flag and the env var, all errors at once, exit 2', () => {
    let error: unknown;
    try {
      resolve({ namespace: 'Bad_NS' }, { HELM_INSTALLER_HISTORY_MAX: '-1', HELM_INSTALLER_TIMEOUT: 'soon' });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ exitCode: ExitCode.usage });
    const lines = (error as Error).message.split('\n');
    expect(lines).toEqual([
      'invalid --namespace "Bad_NS" (or env HELM_INSTALLER_NAMESPACE): expected a namespace name: lowercase letters, digits and \'-\', at most 63 characters, starting and ending with a letter or digit',
      'invalid HELM_INSTALLER_TIMEOUT="soon" (env for --timeout): expected a duration such as 300s, 10m or 1h30m',
      'invalid HELM_INSTALLER_HISTORY_MAX="-1" (env for --history-max): expected a whole number >= 0 (0 keeps every revision)',
    ]);
  });

  it('the reliability options: durations in ms from flag or env, errors naming flag and env var', () => {
    const o = resolve(
      { lockTimeout: '30s' },
      {
        HELM_INSTALLER_CONNECT_TIMEOUT: '2m',
        HELM_INSTALLER_FORCE_UPGRADE: 'false',
        HELM_INSTALLER_FAIL_FAST_AFTER: '0',
      },
    );
    expect([o.lockTimeout, o.connectTimeout, o.forceUpgrade, o.failFastAfter, o.progressInterval]).toEqual([
      30_000,
      120_000,
      false,
      0,
      30_000,
    ]);
    expect(resolve({}, {})).toMatchObject({
      lockTimeout: 300_000,
      connectTimeout: 60_000,
      forceUpgrade: false,
      failFastAfter: 90_000,
    });
    expect(() => resolve({}, { HELM_INSTALLER_LOCK_TIMEOUT: 'a while' })).toThrow(
      'invalid HELM_INSTALLER_LOCK_TIMEOUT="a while" (env for --lock-timeout): expected a duration such as 30s, 5m or 1h',
    );
  });

  it('a bad --set-json never echoes the secret it holds', () => {
    const secrets = new SecretRegistry();
    expect(() => resolve({ setJson: ['db={"password":"Hunter-22-Secret","user":"app"'] }, {}, secrets)).toThrow(
      `invalid --set-json "db={\\"password\\":\\"${MASK}\\",\\"user\\":\\"app\\"" (or env HELM_INSTALLER_SET_JSON): the value of "db" is not valid JSON (syntax error at position 43)`,
    );
    expect(secrets.maskText('x Hunter-22-Secret y')).toBe(`x ${MASK} y`);
  });

  it('lists are bounded', () => {
    expect(() =>
      resolve({}, { HELM_INSTALLER_SET: Array.from({ length: 1001 }, (_, i) => `k${i}=1`).join('\n') }),
    ).toThrow('HELM_INSTALLER_SET (env for --set) has 1001 items; at most 1000 are accepted');
  });

  it('names HELM_INSTALLER_* variables the command does not read, with the likely intended one', () => {
    expect(
      unknownEnvVars(
        installOptionTable,
        {
          HELM_INSTALLER_DRYRUN: 'true',
          HELM_INSTALLER_TIMEOT: '5m',
          HELM_INSTALLER_TERMINATION_LOG: '/x',
          HELM_INSTALLER_TIMEOUT: '5m',
          HOME: '/root',
        },
        'install',
      ),
    ).toEqual([
      'HELM_INSTALLER_DRYRUN is not an option of install and is ignored; did you mean HELM_INSTALLER_DRY_RUN?',
      'HELM_INSTALLER_TIMEOT is not an option of install and is ignored; did you mean HELM_INSTALLER_TIMEOUT?',
    ]);
  });

  it('the common table gives every option its own env var', () => {
    const envs = Object.values(installOptionTable).map((s) => s.env);
    expect(new Set(envs).size).toBe(envs.length);
    expect(Object.keys(commonOptionTable).every((k) => k in installOptionTable)).toBe(true);
  });
});

describe('helm argv', () => {
  const args = {
    release: 'shop',
    chart: '/app/shop',
    namespace: 'prod',
    values: { files: ['/v/base.yaml', '/v/customer.yaml'], sets: [{ kind: 'set' as const, expression: 'a=1' }] },
    timeout: '5m',
    historyMax: 5,
    dryRun: false,
    takeOwnership: true,
    postRendererArgs: [],
    extraArgs: ['--debug'],
  };
  // What every argv below has (the release, chart and namespace; its timeout, history and
  // values reset; the value layers in order), written out once; the flags between are each case's own.
  const HEAD = ['upgrade', '--install', 'shop', '/app/shop', '--namespace', 'prod', '--create-namespace'];
  const LIMITS = ['--timeout', '5m', '--history-max', '5', '--reset-values'];
  const VALUES = ['-f', '/v/base.yaml', '-f', '/v/customer.yaml', '--set', 'a=1'];
  it('helm 4 uses --wait=watcher and --rollback-on-failure', () => {
    expect(upgradeInstallArgs(args, helmTraits(4))).toEqual([
      ...HEAD,
      '--wait=watcher',
      '--rollback-on-failure',
      ...LIMITS,
      '--take-ownership',
      '--server-side=true',
      '--force-conflicts',
      ...VALUES,
      '--debug',
    ]);
  });
  it('helm 4 takes conflicting fields back on every upgrade, not only when adopting objects; helm 3 has no such flag', () => {
    expect(upgradeInstallArgs({ ...args, takeOwnership: false, extraArgs: [] }, helmTraits(4))).toEqual([
      ...HEAD,
      '--wait=watcher',
      '--rollback-on-failure',
      ...LIMITS,
      '--server-side=true',
      '--force-conflicts',
      ...VALUES,
    ]);
    expect(upgradeInstallArgs({ ...args, takeOwnership: false, extraArgs: [] }, helmTraits(3))).toEqual([
      ...HEAD,
      '--wait',
      '--atomic',
      ...LIMITS,
      ...VALUES,
    ]);
  });
  it("helm's client rate limit: 50 a second after a burst of 300 unless the environment sets either", () => {
    expect(clientRateArgs({})).toEqual(['--qps', '50', '--burst-limit', '300']);
    expect(clientRateArgs({ HELM_QPS: '7' })).toEqual(['--burst-limit', '300']);
    expect(clientRateArgs({ HELM_BURST_LIMIT: '20' })).toEqual(['--qps', '50']);
    expect(clientRateArgs({ HELM_QPS: '7', HELM_BURST_LIMIT: '20' })).toEqual([]);
    expect(clientRateArgs({ HELM_QPS: '' })).toEqual(['--qps', '50', '--burst-limit', '300']);
  });
  it('helm 3 uses --wait --atomic, and dry run is server-side', () => {
    const v3 = upgradeInstallArgs({ ...args, dryRun: true }, helmTraits(3));
    expect(v3).toContain('--atomic');
    expect(v3).toContain('--wait');
    expect(v3).not.toContain('--rollback-on-failure');
    expect(v3).toContain('--dry-run=server');
  });
  it('parses helm versions', () => {
    expect(parseHelmVersion('v4.1.4+g05fa379')).toEqual({ version: 'v4.1.4', major: 4 });
    expect(parseHelmVersion('v3.17.2+gcc0bbbd')).toEqual({ version: 'v3.17.2', major: 3 });
    expect(parseHelmVersion('v2.16.0')).toBeUndefined();
  });
});
