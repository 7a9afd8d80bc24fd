// The vendored-dependency check against helm itself: small charts written here (archives made
// by the real helm), each read by our loader and rendered by helm 4 and helm 3 with `helm
// template`. Every chart helm refuses for a missing dependency we refuse (exit 3); every chart
// helm renders with its dependencies in place we accept; and the two cases where we are
// stricter on purpose (a version other than the one asked for, a subchart's own missing
// dependency: helm renders both, without the alias or without the part) are pinned here too.
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { loadChart } from '../../src/inputs/chart.js';
import { InvalidInputError } from '../../src/common/errors.js';
import { helm3, helm4, tempDir } from '../helpers.js';

const root = tempDir('deps-helm');
const REPO = 'https://charts.example.invalid/stable';

function writeChart(dir: string, name: string, version: string, dependencies = ''): string {
  mkdirSync(join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: ${name}\nversion: ${version}\n${dependencies}`);
  writeFileSync(
    join(dir, 'templates', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}-{{ .Chart.Version }}\n',
  );
  return dir;
}
const needs = (...deps: string[]) => `dependencies:\n${deps.map((d) => `  - ${d}\n`).join('')}`;
const depOn = (extra = '') => needs(`{name: dep, version: 1.2.3, repository: "${REPO}"${extra}}`);

/** A parent needing `dep` 1.2.3, with `vendor` putting whatever it puts in charts/. */
async function parent(
  label: string,
  deps: string,
  vendor: (charts: string) => Promise<void> | void = () => {},
): Promise<string> {
  const dir = writeChart(join(root, label), 'parent', '1.0.0', deps);
  mkdirSync(join(dir, 'charts'), { recursive: true });
  await vendor(join(dir, 'charts'));
  return dir;
}
const packaged = async (source: string, into: string) => {
  await execa(helm4, ['package', source, '-d', into]);
};

const cases = {
  // helm refuses: "found in Chart.yaml, but missing in charts/ directory: dep"
  missing: () => parent('missing', depOn()),
  fileRepository: () =>
    parent('file-repository', needs('{name: dep, version: 1.2.3, repository: "file://../dep-source"}')),
  disabled: () => parent('disabled', depOn(', condition: dep.enabled')),
  underscored: () => parent('underscored', depOn(), (c) => void writeChart(join(c, '_dep'), 'dep', '1.2.3')),
  dotted: () => parent('dotted', depOn(), (c) => void writeChart(join(c, '.dep'), 'dep', '1.2.3')),
  // helm renders, dependencies in place
  directoryOtherName: () =>
    parent('directory', depOn(), (c) => void writeChart(join(c, 'vendored-copy'), 'dep', '1.2.3')),
  archive: () => parent('archive', depOn(), (c) => packaged(writeChart(join(root, 'dep-source'), 'dep', '1.2.3'), c)),
  aliasedTwice: () =>
    parent(
      'aliased',
      needs('{name: dep, version: 1.2.3, alias: one}', '{name: dep, version: "~1.2.0", alias: two}'),
      (c) => void writeChart(join(c, 'dep'), 'dep', '1.2.3'),
    ),
  // helm renders, we refuse
  wrongVersion: () =>
    parent('wrong-version', depOn(', alias: aliased'), (c) => void writeChart(join(c, 'dep'), 'dep', '1.3.0')),
  nestedMissing: () =>
    parent(
      'nested',
      needs('{name: mid, version: 1.0.0}'),
      (c) => void writeChart(join(c, 'mid'), 'mid', '1.0.0', depOn()),
    ),
};
type Case = keyof typeof cases;

const helmRenders = async (helmBin: string, chart: string) =>
  (await execa(helmBin, ['template', 'r', chart], { reject: false })).exitCode === 0;
const weAccept = (chart: string) =>
  loadChart({ chart, appDir: '/nonexistent' }).then(
    () => true,
    (err: unknown) => {
      expect(err).toBeInstanceOf(InvalidInputError);
      return false;
    },
  );

describe.each([
  ['helm 4', helm4],
  ['helm 3', helm3],
])('the check against %s template', (_name, helmBin) => {
  it.each<[Case, boolean, boolean]>([
    ['missing', false, false],
    ['fileRepository', false, false],
    ['disabled', false, false],
    ['underscored', false, false],
    ['dotted', false, false],
    ['directoryOtherName', true, true],
    ['archive', true, true],
    ['aliasedTwice', true, true],
    ['wrongVersion', true, false],
    ['nestedMissing', true, false],
  ])('%s: helm renders it %s, we accept it %s', async (name, helmOk, ours) => {
    const chart = await cases[name]();
    expect(await helmRenders(helmBin, chart)).toBe(helmOk);
    expect(await weAccept(chart)).toBe(ours);
  });
});

describe('archives', () => {
  it('a whole chart packaged by helm is checked inside: its Chart.lock and its archived subchart read from the archive', async () => {
    const source = await parent('locked', depOn(), (c) =>
      packaged(writeChart(join(root, 'dep-locked'), 'dep', '1.2.3'), c),
    );
    writeFileSync(
      join(source, 'Chart.lock'),
      `dependencies:\n- name: dep\n  repository: ${REPO}\n  version: 1.2.2\ndigest: sha256:0\ngenerated: "2026-11-25T00:00:00Z"\n`,
    );
    const out = join(root, 'packaged');
    await execa(helm4, ['package', source, '-d', out]);
    const archive = join(out, 'parent-1.0.0.tgz');
    // The vendor's CI (strictPins) refuses it; anywhere else it loads, marked, since 1.2.3 is what Chart.yaml asks for.
    const err = await loadChart({ chart: archive, appDir: '/nonexistent' }, { strictPins: true }).catch(
      (e: unknown) => e,
    );
    expect((err as InvalidInputError).message).toBe(
      `chart ${archive}: dependency dep is 1.2.3 in charts/, but Chart.lock pins 1.2.2`,
    );
    const offPin = await loadChart({ chart: archive, appDir: '/nonexistent' });
    expect(offPin.dependencies.map((d) => [d.name, d.vendored, d.pinned, d.ok, d.offPin])).toEqual([
      ['dep', ['1.2.3'], '1.2.2', false, true],
    ]);
    expect((err as InvalidInputError).hint).toContain(
      `reachable, rebuild ${archive} (\`helm dependency build\` on its chart, then \`helm package\`)`,
    );
    // With the pin right, the same archive loads, and the check says what it found.
    writeFileSync(
      join(source, 'Chart.lock'),
      `dependencies:\n- name: dep\n  repository: ${REPO}\n  version: 1.2.3\ndigest: sha256:0\ngenerated: "2026-11-25T00:00:00Z"\n`,
    );
    renameSync(archive, `${archive}.old`);
    await execa(helm4, ['package', source, '-d', out]);
    const loaded = await loadChart({ chart: archive, appDir: '/nonexistent' });
    expect(loaded.dependencies.map((d) => [d.chart, d.name, d.vendored, d.pinned, d.ok])).toEqual([
      [archive, 'dep', ['1.2.3'], '1.2.3', true],
    ]);
  });
});
