// Issue 36, item 5: a chart helm installs is not refused at the customer's site for the vendor's
// bookkeeping. A subchart's dependency vendored at 2.2.4 where its Chart.lock pins 2.2.3 (within
// the range ~2.2.0): `install` warns naming both versions and installs it, with helm 4 and helm 3;
// `check-chart` refuses it (test/cli/vendored-deps.test.ts). What was installed is read with kubectl.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { getJson } from '../cluster/kube.js';
import { helm3, helm4, repoRoot } from '../helpers.js';
import { install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';

const chart = join(repoRoot, 'test', 'fixtures', 'charts', 'off-pin');
const newNamespace = namespacesDeletedAfterAll();

describe("install of a chart whose subchart's dependency is off its lock's pin", () => {
  it.each([
    ['helm 4', helm4],
    ['helm 3', helm3],
  ])('warns naming both versions and installs it (%s)', async (_name, helmBin) => {
    const namespace = await newNamespace('off-pin');
    const r = await install('offpin', namespace, ['--chart', chart], { HELM_BIN: helmBin });
    expect(r.exitCode, r.stderr).toBe(0);
    const warning = r.stdout
      .split('\n')
      .filter((l) => l.includes('"level":40'))
      .map((l) => JSON.parse(l) as { msg: string; vendored: string[]; pinned: string });
    expect(warning.map((w) => [w.msg, w.vendored, w.pinned])).toEqual([
      [
        `chart ${chart}/charts/mid: dependency lib is 2.2.4 in charts/, but Chart.lock pins 2.2.3: installed as it is (it is within the range ~2.2.0 Chart.yaml asks for); the vendor's CI (helm-installer check-chart) refuses this chart until its charts/ matches the lock`,
        ['2.2.4'],
        '2.2.3',
      ],
    ]);
    const cm = await getJson(['get', 'configmap', 'offpin-lib'], { kubeconfig: kubeconfig(), namespace });
    expect(cm.data).toEqual({ version: '2.2.4' });
  });
});
