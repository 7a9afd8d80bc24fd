// Hostile input through the built CLI: values files, chart archives, --set expressions, registry
// addresses and env vars built to exhaust memory, time or the stack. Each must end with exit 2
// or 3 naming the input, in bounded time, with the CLI's peak RSS under the shipped Job's memory
// limit, a termination message written, and helm upgrade never started (a spy around the REAL
// helm records every call).
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { execa } from 'execa';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appDir, helm4, repoRoot, startCli, tempDir } from '../helpers.js';

const dir = tempDir('hostile');
const spyLog = join(dir, 'helm-calls.log');
const spy = join(dir, 'helm-spy');
const kubeconfig = join(dir, 'kubeconfig');
const preload = join(repoRoot, 'test', 'cli', 'peak-rss.mjs');

/** The container memory limit of the Job we ship, read from manifests/installer.yaml. */
function jobMemoryLimitBytes(): number {
  const m = /limits:\s*\{\s*memory:\s*(\d+)(Mi|Gi)\s*\}/.exec(
    readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8'),
  );
  if (!m) throw new Error('no memory limit in manifests/installer.yaml');
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 ** 3 : 1024 ** 2);
}
const LIMIT = jobMemoryLimitBytes();

function helmCalls(): string[] {
  return existsSync(spyLog) ? readFileSync(spyLog, 'utf8').trim().split('\n').filter(Boolean) : [];
}

interface Row {
  name: string;
  exitCode: number;
  peakMiB: number;
  seconds: number;
}
const rows: Row[] = [];

/** Runs the CLI with the peak-RSS preload, also sampling VmHWM from outside while it runs. */
async function runMeasured(args: string[], env: Record<string, string>) {
  const rssFile = join(dir, `rss-${rows.length}-${Date.now()}`);
  const termination = join(dir, `termination-${rows.length}-${Date.now()}`);
  writeFileSync(termination, '');
  const started = performance.now();
  const child = startCli(args, {
    nodeArgs: ['--import', preload],
    timeoutMs: 60_000,
    // The storefront chart alone (the bundled app is a release plan); a case's --chart wins.
    env: {
      HELM_BIN: spy,
      KUBECONFIG: kubeconfig,
      PEAK_RSS_FILE: rssFile,
      HELM_INSTALLER_TERMINATION_LOG: termination,
      HELM_INSTALLER_CHART: join(appDir, 'storefront'),
      ...env,
    },
  });
  let sampled = 0;
  const timer = setInterval(() => {
    try {
      const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      if (kib) sampled = Math.max(sampled, Number(kib) * 1024);
    } catch {
      // exited between samples
    }
  }, 25);
  const r = await child;
  clearInterval(timer);
  const seconds = (performance.now() - started) / 1000;
  const atExit = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) * 1024 : 0;
  return {
    exitCode: r.exitCode ?? -1,
    stdout: String(r.stdout),
    stderr: String(r.stderr),
    termination: readFileSync(termination, 'utf8'),
    peak: Math.max(sampled, atExit),
    atExit,
    seconds,
  };
}

interface Case {
  name: string;
  args?: () => string[];
  env?: () => Record<string, string>;
  code: 2 | 3;
  /** The input named in the message (a path, a flag, an env var). */
  names: () => (string | RegExp)[];
}

async function expectBounded(c: Case) {
  const before = helmCalls().length;
  const r = await runMeasured(['install', '--app-dir', appDir, ...(c.args?.() ?? [])], c.env?.() ?? {});
  rows.push({ name: c.name, exitCode: r.exitCode, peakMiB: r.peak / 1024 ** 2, seconds: r.seconds });
  expect(r.exitCode, r.stderr).toBe(c.code);
  for (const n of c.names()) {
    expect(r.stderr).toMatch(n);
    expect(r.termination).toMatch(n);
  }
  expect(r.termination).toMatch(new RegExp(`^helm-installer FAILED \\(exit ${c.code}`));
  expect(r.atExit, 'the preload reported the peak at exit').toBeGreaterThan(0);
  expect(r.peak).toBeLessThan(LIMIT);
  expect(
    helmCalls()
      .slice(before)
      .filter((call) => call.startsWith('upgrade')),
  ).toEqual([]);
}

// --- builders of hostile files ---------------------------------------------------------------

const p = (name: string) => join(dir, name);

function write(name: string, content: string | Buffer): string {
  writeFileSync(p(name), content);
  return p(name);
}

interface RawEntry {
  path: string;
  type?: 'File' | 'SymbolicLink' | 'CharacterDevice' | 'FIFO';
  /** Body bytes, or a number of zero bytes streamed (for bombs). */
  body?: string | Buffer | number;
  linkpath?: string;
}

/**
 * A .tgz written entry by entry with tar's own header encoder, as concatenated gzip members (valid
 * gzip, which helm's reader and ours both read whole): zero bodies repeat one compressed 1 MiB
 * member, so a 1 GiB bomb is written in milliseconds instead of seconds of deflate.
 */
async function writeTgz(name: string, entries: RawEntry[], trailingZeros = 0): Promise<string> {
  const file = p(name);
  const members: Buffer[] = [];
  const zeroMember = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
  const putZeros = (n: number) => {
    for (let left = n; left > 0; left -= 1024 * 1024)
      members.push(left >= 1024 * 1024 ? zeroMember : gzipSync(Buffer.alloc(left)));
  };
  for (const e of entries) {
    const body = typeof e.body === 'string' ? Buffer.from(e.body) : Buffer.isBuffer(e.body) ? e.body : undefined;
    const size = typeof e.body === 'number' ? e.body : (body?.length ?? 0);
    const header = new tar.Header({
      path: e.path,
      type: e.type ?? 'File',
      size,
      mode: 0o644,
      mtime: new Date(0),
      linkpath: e.linkpath,
    });
    header.encode();
    members.push(gzipSync(header.block!));
    if (body) members.push(gzipSync(body));
    else putZeros(size);
    const pad = (512 - (size % 512)) % 512;
    if (pad) members.push(gzipSync(Buffer.alloc(pad)));
  }
  members.push(gzipSync(Buffer.alloc(1024)));
  putZeros(trailingZeros);
  writeFileSync(file, Buffer.concat(members));
  return file;
}

const chartYaml = (name: string) => `apiVersion: v2\nname: ${name}\nversion: 0.1.0\n`;

function billionLaughs(levels: number): string {
  const lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let i = 1; i < levels; i += 1)
    lines.push(
      `a${i}: &a${i} [${Array(9)
        .fill(`*a${i - 1}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  writeFileSync(spy, `#!/bin/sh\necho "$*" >> '${spyLog}'\nexec '${helm4}' "$@"\n`);
  chmodSync(spy, 0o755);
  // Nothing listens there: an upgrade that started would fail with exit 5, not 2 or 3.
  writeFileSync(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
  );
  await execa('mkfifo', [p('values-fifo.yaml')]);
  await execa('mkfifo', [p('chart-fifo.tgz')]);
  symlinkSync('/dev/zero', p('zero-link.yaml'));
  write('alias-bomb.yaml', billionLaughs(10));
  write(
    'alias-bomb-merge.yaml',
    `base: &b {k: v}\n${Array.from({ length: 5000 }, (_, i) => `m${i}: {<<: *b}`).join('\n')}\n`,
  );
  write('deep-flow.yaml', `a: ${'['.repeat(200_000)}${']'.repeat(200_000)}\n`);
  write('deep-map.yaml', `a: ${'{b: '.repeat(100_000)}1${'}'.repeat(100_000)}\n`);
  write('huge.yaml', `big: "${'x'.repeat(5 * 1024 * 1024)}"\n`);
  write('many-docs.yaml', 'a: 1\n---\nb: 2\n'.repeat(50_000));
  write(
    'flow-items.yaml',
    `a: [${Array(2 * 1024 * 1024 - 8)
      .fill('1')
      .join(',')}]\n`,
  );
  write('many-keys.yaml', Array.from({ length: 200_000 }, (_, i) => `k${i}: ${i}\n`).join(''));
  write('binary.yaml', Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + 13) % 256)));
  write('scalar.yaml', `${'word '.repeat(100_000)}\n`);
  write('tabs.yaml', 'a:\n\t- b\n');
  mkdirSync(p('configmap-flood'));
  for (let i = 0; i < 300; i += 1)
    writeFileSync(join(p('configmap-flood'), `v${String(i).padStart(3, '0')}.yaml`), `k${i}: ${i}\n`);
  write('pull-secret-garbage.json', Buffer.alloc(2 * 1024 * 1024, 0x7b));

  await writeTgz('bomb-1gib.tgz', [
    { path: 'bomb/Chart.yaml', body: chartYaml('bomb') },
    { path: 'bomb/templates/big.yaml', body: 1024 ** 3 },
  ]);
  await writeTgz('bomb-many.tgz', [
    { path: 'many/Chart.yaml', body: chartYaml('many') },
    ...Array.from({ length: 40 }, (_, i) => ({ path: `many/templates/f${i}.yaml`, body: 4 * 1024 * 1024 })),
  ]);
  await writeTgz('bomb-trailing.tgz', [{ path: 'trail/Chart.yaml', body: chartYaml('trail') }], 1024 ** 3);
  await writeTgz('entries.tgz', [
    { path: 'entries/Chart.yaml', body: chartYaml('entries') },
    ...Array.from({ length: 12_000 }, (_, i) => ({ path: `entries/templates/e${i}.yaml`, body: '' })),
  ]);
  await writeTgz('chart-alias-bomb.tgz', [
    { path: 'laughs/Chart.yaml', body: `${chartYaml('laughs')}${billionLaughs(10)}` },
  ]);
  await writeTgz('chart-values-bomb.tgz', [
    { path: 'vals/Chart.yaml', body: chartYaml('vals') },
    { path: 'vals/values.yaml', body: billionLaughs(10) },
  ]);
  await writeTgz('big-chart-yaml.tgz', [{ path: 'big/Chart.yaml', body: 6 * 1024 * 1024 }]);
  await writeTgz('device.tgz', [
    { path: 'dev/Chart.yaml', body: chartYaml('dev') },
    { path: 'dev/templates/zero', type: 'CharacterDevice' },
  ]);
  await writeTgz('fifo-entry.tgz', [
    { path: 'fifo/Chart.yaml', body: chartYaml('fifo') },
    { path: 'fifo/templates/pipe', type: 'FIFO' },
  ]);
  // Archived subcharts (charts/*.tgz) are read too (their values and annotations), with the same limits.
  const innerBomb = readFileSync(
    await writeTgz('inner-bomb.tgz', [
      { path: 'inner/Chart.yaml', body: chartYaml('inner') },
      { path: 'inner/templates/big.yaml', body: 1024 ** 3 },
    ]),
  );
  await writeTgz('subchart-bomb.tgz', [
    { path: 'outer/Chart.yaml', body: chartYaml('outer') },
    { path: 'outer/charts/inner-0.1.0.tgz', body: innerBomb },
  ]);
  const innerEscape = readFileSync(
    await writeTgz('inner-escape.tgz', [
      { path: 'esc/Chart.yaml', body: chartYaml('esc') },
      { path: 'esc/../../etc/cron.d/x', body: 'x' },
    ]),
  );
  await writeTgz('subchart-escape.tgz', [
    { path: 'outer/Chart.yaml', body: chartYaml('outer') },
    { path: 'outer/charts/esc-0.1.0.tgz', body: innerEscape },
  ]);
  await writeTgz('no-chart-yaml.tgz', [{ path: 'nochart/values.yaml', body: 'a: 1\n' }]);
  write('not-gzip.tgz', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 31 + 7) % 256)));
  write('zeros.tgz', gzipSync(Buffer.alloc(64 * 1024 * 1024)));
  const good = await writeTgz('good-for-truncation.tgz', [
    { path: 'cut/Chart.yaml', body: chartYaml('cut') },
    { path: 'cut/templates/a.yaml', body: 'x'.repeat(200_000) },
  ]);
  write('truncated.tgz', readFileSync(good).subarray(0, 300));
  mkdirSync(p('dir-chart/templates'), { recursive: true });
  writeFileSync(p('dir-chart/Chart.yaml'), chartYaml('dirchart'));
  await execa('mkfifo', [p('dir-chart/templates/pipe.yaml')]);
  mkdirSync(p('dir-chart-big'), { recursive: true });
  writeFileSync(p('dir-chart-big/Chart.yaml'), `${chartYaml('dirbig')}description: "${'d'.repeat(6 * 1024 * 1024)}"\n`);
}, 120_000);

afterAll(() => {
  // The figures for the report; never assertions beyond the memory limit above.
  const table = rows
    .map((r) => `| ${r.name} | ${r.exitCode} | ${r.peakMiB.toFixed(0)} MiB | ${r.seconds.toFixed(2)} s |`)
    .join('\n');
  console.log(
    `hostile input (${rows.length} cases, Job memory limit ${LIMIT / 1024 ** 2} MiB)\n| case | exit | peak RSS | time |\n|---|---|---|---|\n${table}`,
  );
});

const cases: Case[] = [
  // values files
  {
    name: '--values /dev/zero',
    args: () => ['--values', '/dev/zero'],
    code: 3,
    names: () => ['/dev/zero', 'character device'],
  },
  {
    name: '--values a FIFO',
    args: () => ['--values', p('values-fifo.yaml')],
    code: 3,
    names: () => [p('values-fifo.yaml'), 'FIFO'],
  },
  {
    name: '--values a symlink to /dev/zero',
    args: () => ['--values', p('zero-link.yaml')],
    code: 3,
    names: () => [p('zero-link.yaml'), 'character device'],
  },
  {
    name: 'HELM_INSTALLER_VALUES=/dev/zero',
    env: () => ({ HELM_INSTALLER_VALUES: '/dev/zero' }),
    code: 3,
    names: () => ['/dev/zero'],
  },
  {
    name: '--base-values /dev/urandom',
    args: () => ['--base-values', '/dev/urandom'],
    code: 3,
    names: () => ['/dev/urandom', 'character device'],
  },
  {
    name: 'values: billion laughs (9^10 nodes)',
    args: () => ['--values', p('alias-bomb.yaml')],
    code: 3,
    names: () => [p('alias-bomb.yaml'), /alias/],
  },
  {
    name: 'values: 5000 merge-key aliases',
    args: () => ['--values', p('alias-bomb-merge.yaml')],
    code: 3,
    names: () => [p('alias-bomb-merge.yaml'), /alias/],
  },
  {
    name: 'values: 200k nested flow lists',
    args: () => ['--values', p('deep-flow.yaml')],
    code: 3,
    names: () => [p('deep-flow.yaml'), /nested 200000 levels deep/],
  },
  {
    name: 'values: 100k nested flow maps',
    args: () => ['--values', p('deep-map.yaml')],
    code: 3,
    names: () => [p('deep-map.yaml'), /nested 100000 levels deep/],
  },
  {
    name: 'values: a 5 MiB file',
    args: () => ['--values', p('huge.yaml')],
    code: 3,
    names: () => [p('huge.yaml'), /over the limit of 4 MiB/],
  },
  {
    name: 'values: 100k YAML documents',
    args: () => ['--values', p('many-docs.yaml')],
    code: 3,
    names: () => [p('many-docs.yaml'), /YAML tokens/],
  },
  {
    name: 'values: a 4 MiB flow list (2M items)',
    args: () => ['--values', p('flow-items.yaml')],
    code: 3,
    names: () => [p('flow-items.yaml'), /YAML tokens/],
  },
  {
    name: 'values: 200k keys in 3.8 MiB',
    args: () => ['--values', p('many-keys.yaml')],
    code: 3,
    names: () => [p('many-keys.yaml'), /YAML tokens/],
  },
  {
    name: 'values: binary garbage',
    args: () => ['--values', p('binary.yaml')],
    code: 3,
    names: () => [p('binary.yaml')],
  },
  {
    name: 'values: a 500 KB scalar at the top',
    args: () => ['--values', p('scalar.yaml')],
    code: 3,
    names: () => [p('scalar.yaml'), /must be a map/],
  },
  {
    name: 'values: tab indentation',
    args: () => ['--values', p('tabs.yaml')],
    code: 3,
    names: () => [p('tabs.yaml'), /invalid YAML/],
  },
  {
    name: 'values: a directory of 300 files',
    args: () => ['--values', p('configmap-flood')],
    code: 3,
    names: () => [p('configmap-flood'), /at most 200/],
  },
  // chart archives
  {
    name: 'chart: 1 GiB gzip bomb (one entry)',
    args: () => ['--chart', p('bomb-1gib.tgz')],
    code: 3,
    names: () => [p('bomb-1gib.tgz'), /limit/],
  },
  {
    name: 'chart: 160 MiB in 40 entries',
    args: () => ['--chart', p('bomb-many.tgz')],
    code: 3,
    names: () => [p('bomb-many.tgz'), /100 MiB/],
  },
  {
    name: 'chart: 1 GiB of zeros after the tar end',
    args: () => ['--chart', p('bomb-trailing.tgz')],
    code: 3,
    names: () => [p('bomb-trailing.tgz'), /outside any tar entry/],
  },
  {
    name: 'chart: 12000 entries',
    args: () => ['--chart', p('entries.tgz')],
    code: 3,
    names: () => [p('entries.tgz'), /more than 10000 entries/],
  },
  {
    name: 'chart: alias bomb in Chart.yaml',
    args: () => ['--chart', p('chart-alias-bomb.tgz')],
    code: 3,
    names: () => [/chart-alias-bomb\.tgz:Chart\.yaml/],
  },
  {
    name: 'chart: alias bomb in values.yaml',
    args: () => ['--chart', p('chart-values-bomb.tgz')],
    code: 3,
    names: () => [/chart-values-bomb\.tgz:values\.yaml/],
  },
  {
    name: 'chart: a 6 MiB Chart.yaml',
    args: () => ['--chart', p('big-chart-yaml.tgz')],
    code: 3,
    names: () => [p('big-chart-yaml.tgz'), /limit/],
  },
  {
    name: 'chart: a device entry',
    args: () => ['--chart', p('device.tgz')],
    code: 3,
    names: () => [p('device.tgz'), /device or FIFO/],
  },
  {
    name: 'chart: a FIFO entry',
    args: () => ['--chart', p('fifo-entry.tgz')],
    code: 3,
    names: () => [p('fifo-entry.tgz'), /device or FIFO/],
  },
  {
    name: 'chart: a 1 GiB gzip bomb as an archived subchart',
    args: () => ['--chart', p('subchart-bomb.tgz')],
    code: 3,
    names: () => [/subchart-bomb\.tgz:charts\/inner-0\.1\.0\.tgz/, /limit/],
  },
  {
    name: 'chart: an archived subchart with a .. path',
    args: () => ['--chart', p('subchart-escape.tgz')],
    code: 3,
    names: () => [/subchart-escape\.tgz:charts\/esc-0\.1\.0\.tgz/, /path with \.\./],
  },
  {
    name: 'chart: no Chart.yaml',
    args: () => ['--chart', p('no-chart-yaml.tgz')],
    code: 3,
    names: () => [p('no-chart-yaml.tgz'), /Chart\.yaml/],
  },
  {
    name: 'chart: not gzip',
    args: () => ['--chart', p('not-gzip.tgz')],
    code: 3,
    names: () => [p('not-gzip.tgz'), /not a gzip archive/],
  },
  {
    name: 'chart: 64 MiB of gzipped zeros',
    args: () => ['--chart', p('zeros.tgz')],
    code: 3,
    names: () => [p('zeros.tgz'), /outside any tar entry/],
  },
  {
    name: 'chart: truncated archive',
    args: () => ['--chart', p('truncated.tgz')],
    code: 3,
    names: () => [p('truncated.tgz')],
  },
  {
    name: 'chart: /dev/zero',
    args: () => ['--chart', '/dev/zero'],
    code: 3,
    names: () => ['/dev/zero', 'character device'],
  },
  {
    name: 'chart: a FIFO',
    args: () => ['--chart', p('chart-fifo.tgz')],
    code: 3,
    names: () => [p('chart-fifo.tgz'), 'FIFO'],
  },
  {
    name: 'chart dir: a FIFO template',
    args: () => ['--chart', p('dir-chart')],
    code: 3,
    names: () => [p('dir-chart/templates/pipe.yaml'), /special file/],
  },
  {
    name: 'chart dir: a 6 MiB Chart.yaml',
    args: () => ['--chart', p('dir-chart-big')],
    code: 3,
    names: () => [p('dir-chart-big/Chart.yaml'), /limit/],
  },
  // --set expressions
  {
    name: '--set list index 99999999',
    args: () => ['--set', 'a[99999999]=1'],
    code: 2,
    names: () => ['--set', /over helm's limit of 65536/],
  },
  // 60 KB: argv strings stop at 128 KiB.
  {
    name: '--set-json 30k nested lists',
    args: () => ['--set-json', `a=${'['.repeat(30_000)}${']'.repeat(30_000)}`],
    code: 2,
    names: () => ['--set-json', /nested deeper than 64/],
  },
  {
    name: '--set 100 KiB expression',
    args: () => ['--set', `a=${'x'.repeat(100 * 1024)}`],
    code: 2,
    names: () => ['--set', /64 KiB/],
  },
  {
    name: '--set-json invalid JSON',
    args: () => ['--set-json', 'a={"b":'],
    code: 2,
    names: () => ['--set-json', /not valid JSON/],
  },
  {
    name: '--set a key without a value',
    args: () => ['--set', 'a=1,b'],
    code: 2,
    names: () => ['--set', /has no value/],
  },
  {
    name: 'HELM_INSTALLER_SET with 5000 lines',
    env: () => ({ HELM_INSTALLER_SET: Array.from({ length: 5000 }, (_, i) => `k${i}=1`).join('\n') }),
    code: 2,
    names: () => ['HELM_INSTALLER_SET', /at most 1000/],
  },
  // registry addresses
  {
    name: '--registry with a scheme',
    args: () => ['--registry', 'https://registry.local'],
    code: 2,
    names: () => ['--registry', 'HELM_INSTALLER_REGISTRY', /scheme/],
  },
  {
    name: '--registry of 10000 characters',
    args: () => ['--registry', `${'a.'.repeat(5000)}!`],
    code: 2,
    names: () => ['--registry', /255/],
  },
  {
    name: '--registry with a space and @',
    args: () => ['--registry', 'reg istry@evil'],
    code: 2,
    names: () => ['--registry', /whitespace/],
  },
  {
    name: '--registry with a port out of range',
    args: () => ['--registry', 'registry.local:99999999999'],
    code: 2,
    names: () => ['--registry', /port/],
  },
  {
    name: '--registry with a bad namespace',
    args: () => ['--registry', 'registry.local/UPPER/..'],
    code: 2,
    names: () => ['--registry', /namespace component/],
  },
  // env vars
  {
    name: 'HELM_INSTALLER_DRY_RUN=maybe',
    env: () => ({ HELM_INSTALLER_DRY_RUN: 'maybe' }),
    code: 2,
    names: () => ['HELM_INSTALLER_DRY_RUN', '--dry-run'],
  },
  {
    name: 'HELM_INSTALLER_HISTORY_MAX=1e309',
    env: () => ({ HELM_INSTALLER_HISTORY_MAX: '1e309' }),
    code: 2,
    names: () => ['HELM_INSTALLER_HISTORY_MAX', '--history-max'],
  },
  {
    name: 'HELM_INSTALLER_TIMEOUT=9999999999h',
    env: () => ({ HELM_INSTALLER_TIMEOUT: '9999999999h' }),
    code: 2,
    names: () => ['HELM_INSTALLER_TIMEOUT', '--timeout', /24h/],
  },
  {
    name: 'HELM_INSTALLER_NAMESPACE of 1000 characters',
    env: () => ({ HELM_INSTALLER_NAMESPACE: 'n'.repeat(1000) }),
    code: 2,
    names: () => ['HELM_INSTALLER_NAMESPACE', '--namespace'],
  },
  {
    name: 'HELM_INSTALLER_RELEASE with a newline',
    env: () => ({ HELM_INSTALLER_RELEASE: 'shop\nevil' }),
    code: 2,
    names: () => ['HELM_INSTALLER_RELEASE', '--release'],
  },
  {
    name: 'HELM_INSTALLER_LOG_LEVEL=verbose',
    env: () => ({ HELM_INSTALLER_LOG_LEVEL: 'verbose' }),
    code: 2,
    names: () => ['HELM_INSTALLER_LOG_LEVEL', '--log-level'],
  },
  {
    name: 'HELM_INSTALLER_IMAGE_PULL_SECRET with a slash',
    env: () => ({ HELM_INSTALLER_IMAGE_PULL_SECRET: '../../etc' }),
    code: 2,
    names: () => ['HELM_INSTALLER_IMAGE_PULL_SECRET'],
  },
  {
    name: 'HELM_INSTALLER_IMAGE_PATHS garbage',
    env: () => ({ HELM_INSTALLER_IMAGE_PATHS: ':::,{}' }),
    code: 2,
    names: () => ['HELM_INSTALLER_IMAGE_PATHS', '--image-path'],
  },
  {
    name: '--pull-secret-file /dev/zero',
    args: () => ['--registry', 'registry.local:5000', '--pull-secret-file', '/dev/zero'],
    code: 2,
    names: () => ['--pull-secret-file', 'HELM_INSTALLER_PULL_SECRET_FILE', '/dev/zero', 'character device'],
  },
  {
    name: '--pull-secret-file of 2 MiB',
    args: () => ['--registry', 'registry.local:5000', '--pull-secret-file', p('pull-secret-garbage.json')],
    code: 2,
    names: () => [
      '--pull-secret-file',
      'HELM_INSTALLER_PULL_SECRET_FILE',
      p('pull-secret-garbage.json'),
      /over the limit of 1 MiB/,
    ],
  },
];

describe('hostile input fails fast and bounded (exit 2 or 3, the input named, under the Job memory limit, no upgrade)', () => {
  it('has at least 30 cases', () => expect(cases.length).toBeGreaterThanOrEqual(30));
  for (const c of cases) it(c.name, () => expectBounded(c), 90_000);
});
