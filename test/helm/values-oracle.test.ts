// The values oracle is helm itself: what the installer hands helm must equal what
// `helm -f l1 -f l2 ... --set ...` merges, including go-yaml's dialect.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { appDir, chartDir, helm, helm3, helm4, runCli, tempDir } from '../helpers.js';

const dir = tempDir('oracle');
const vendor = join(dir, 'vendor.yaml');
const customerDir = join(dir, 'configmap');
const write = (file: string, text: string) => writeFileSync(file, text);

// Dialect cases: yes/on/y are booleans in go-yaml, 0777 is octal, 12:30 a string (sexagesimal in
// YAML 1.1 is only read as a number by some parsers), null deletes, "y" quoted stays a string.
write(
  vendor,
  `web:
  replicaCount: 2
  config:
    features:
      guestCheckout: yes
      promotions: on
      recommendations: off
  extraEnv:
    - name: A
      value: "1"
cache:
  maxmemory: 400mb
report:
  schedule: "30 2 * * *"
legacy:
  mode: 0777
  window: 12:30
  letter: "y"
  bare: y
  tilde: ~
  big: 1e3
  hex: 0x1F
extras:
  a: 1
`,
);
import { mkdirSync } from 'node:fs';
mkdirSync(customerDir);
write(
  join(customerDir, '10-config.yaml'),
  `web:
  replicaCount: 3
  extraEnv:
    - name: B
      value: "2"
cache:
  maxmemory: null
legacy:
  letter: "n"
`,
);
write(join(customerDir, '20-more.yml'), `web:\n  hostname: shop.customer.example\nextras: null\n`);
write(join(customerDir, 'ignored.txt'), `web: {replicaCount: 99}\n`);

const sets = [
  '--set',
  'web.replicaCount=4',
  '--set-string',
  'legacy.zip=01234',
  '--set-json',
  'web.tolerations=[{"key":"k","operator":"Exists"}]',
];
const installerArgs = [
  '--chart',
  chartDir,
  '--app-dir',
  appDir,
  '--base-values',
  vendor,
  '--values',
  customerDir,
  '--set',
  'web.replicaCount=4',
  '--set-string',
  'legacy.zip=01234',
  '--set-json',
  'web.tolerations=[{"key":"k","operator":"Exists"}]',
];

// helm 4's `install --dry-run=client -o json` reports the merged user values as `config`. helm
// 3.17 cannot run that without a cluster (helm/helm#13144), so for helm 3 the oracle is the
// `.Values` that the real chart sees, less the chart's own defaults: checked key by key below.
async function helmConfig(bin: string, files: string[]): Promise<unknown> {
  const out = await helm(bin, [
    'install',
    'oracle',
    chartDir,
    '--dry-run=client',
    '-o',
    'json',
    ...files.flatMap((f) => ['-f', f]),
    ...sets,
  ]);
  return (JSON.parse(out) as { config: unknown }).config;
}

const layerFiles = () => [vendor, join(customerDir, '10-config.yaml'), join(customerDir, '20-more.yml')];

describe('values: helm is the oracle', () => {
  for (const [name, bin] of [
    ['helm 4', helm4],
    ['helm 3', helm3],
  ] as const) {
    it(`equals helm's own layering (${name})`, async () => {
      const expected = await helmConfig(helm4, layerFiles());
      const r = await runCli(['values', '-o', 'json', '--show-secrets', '--helm-bin', bin, ...installerArgs]);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(expected);
      // The dialect cases, spelled out so a regression names itself.
      const v = JSON.parse(r.stdout) as Record<string, Record<string, unknown>>;
      expect(v.legacy).toMatchObject({
        mode: 511,
        window: '12:30',
        letter: 'n',
        bare: true,
        big: 1000,
        hex: 31,
        zip: '01234',
      });
      expect(v.web).toMatchObject({
        replicaCount: 4,
        config: { features: { guestCheckout: true, promotions: true, recommendations: false } },
      });
      expect(v.web!.extraEnv).toEqual([{ name: 'B', value: '2' }]);
      expect(v.cache).toEqual({ maxmemory: null });
      expect(v.extras).toBeNull();
    });

    it(`render gives exactly what ${name} renders from the same -f/--set layers`, async () => {
      const direct = await helm(bin, [
        'template',
        'storefront',
        chartDir,
        ...layerFiles().flatMap((f) => ['-f', f]),
        ...sets,
        '--include-crds',
      ]);
      const r = await runCli(['render', '--helm-bin', bin, ...installerArgs]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout.trim()).toBe(direct.trim());
      expect(r.stdout).toContain('replicas: 4');
    });
  }

  it('prints YAML that helm reads back to the same values (quoted y, 0777, 12:30)', async () => {
    const r = await runCli(['values', '--show-secrets', ...installerArgs]);
    expect(r.exitCode).toBe(0);
    const roundTrip = join(dir, 'printed.yaml');
    writeFileSync(roundTrip, r.stdout);
    const expected = await helmConfig(helm4, layerFiles());
    const back = JSON.parse(
      await helm(helm4, ['install', 'oracle', chartDir, '--dry-run=client', '-o', 'json', '-f', roundTrip]),
    ) as { config: unknown };
    expect(back.config).toEqual(expected);
    expect(parse(r.stdout, { version: '1.1' })).toEqual(expected);
  });

  it('--explain names the layer of each leaf', async () => {
    const r = await runCli(['values', '--explain', ...installerArgs]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContain('web.replicaCount = 4    # --set web.replicaCount=4');
    expect(lines).toContain('web.hostname = "shop.customer.example"    # customer 20-more.yml');
    expect(lines).toContain('legacy.mode = 511    # vendor vendor.yaml');
    expect(lines).toContain('legacy.letter = "n"    # customer 10-config.yaml');
    expect(lines).toContain('cache.maxmemory = null    # customer 10-config.yaml');
    expect(lines).toContain('legacy.zip = "01234"    # --set-string legacy.zip=01234');
  });

  it('redacts secret-looking keys unless --show-secrets', async () => {
    const secretFile = join(dir, 'secret.yaml');
    writeFileSync(secretFile, 'database:\n  password: "s3cr3t-Pa55w0rd"\n');
    const r = await runCli(['values', '--chart', chartDir, '--values', secretFile]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('s3cr3t-Pa55w0rd');
    expect(r.stdout).toContain('[REDACTED]');
    const shown = await runCli(['values', '--chart', chartDir, '--values', secretFile, '--show-secrets']);
    expect(shown.stdout).toContain('s3cr3t-Pa55w0rd');
  });
});
