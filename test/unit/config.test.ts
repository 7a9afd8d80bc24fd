import { describe, expect, it } from 'vitest';
import { parseHistoryMax, parseReleaseName, parseTimeout, splitLines, splitPathList } from '../../src/config.js';
import { ExitCode } from '../../src/errors.js';
import { upgradeInstallArgs } from '../../src/helm/helm-args.js';
import { parseHelmVersion } from '../../src/helm/helm-binary.js';

describe('option validators', () => {
  it('accepts Go durations and rejects the rest with a usage error', () => {
    for (const t of ['300s', '10m', '1h30m', '1.5h', '500ms']) expect(parseTimeout(t)).toBe(t);
    for (const t of ['5', '5x', '', 'ten minutes', '-5m']) {
      expect(() => parseTimeout(t)).toThrow(expect.objectContaining({ exitCode: ExitCode.usage }));
    }
  });
  it('validates history-max and release names', () => {
    expect(parseHistoryMax('0')).toBe(0);
    expect(() => parseHistoryMax('-1')).toThrow(/whole number/);
    expect(parseReleaseName('storefront-prod')).toBe('storefront-prod');
    expect(() => parseReleaseName('Storefront_Prod')).toThrow(/invalid release name/);
  });
  it('splits environment lists', () => {
    expect(splitPathList('/a.yaml:/b:')).toEqual(['/a.yaml', '/b']);
    expect(splitLines('a=1,b=2\n c=3 \n')).toEqual(['a=1,b=2', 'c=3']);
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
  it('helm 4 uses --wait=watcher and --rollback-on-failure', () => {
    expect(upgradeInstallArgs(args, 4)).toEqual([
      'upgrade', '--install', 'shop', '/app/shop', '--namespace', 'prod', '--create-namespace',
      '--wait=watcher', '--rollback-on-failure', '--timeout', '5m', '--history-max', '5', '--take-ownership', '--force-conflicts',
      '-f', '/v/base.yaml', '-f', '/v/customer.yaml', '--set', 'a=1', '--debug',
    ]);
  });
  it('helm 3 uses --wait --atomic, and dry run is server-side', () => {
    const v3 = upgradeInstallArgs({ ...args, dryRun: true }, 3);
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
