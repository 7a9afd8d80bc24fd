// Idempotent redeploy against the real control plane: KOTS applies the installer Job again on
// every config change anywhere; when the chart and the merged values equal the deployed
// revision's and the release is healthy, the run adds no revision and says "unchanged".
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNamespace, getJson, kubectl } from '../cluster/kube.js';
import { appDir, helm4, tempDir } from '../helpers.js';
import { copyChart, history, install, kubeconfig } from './cluster-helpers.js';
import { execa } from 'execa';

const opts = () => ({ kubeconfig: kubeconfig() });

/** The digest labels on the release record of `revision`, read from the Secret helm wrote. */
async function recordLabels(ns: string, revision: number): Promise<Record<string, string>> {
  const s = await getJson(['get', 'secret', `sh.helm.release.v1.storefront.v${revision}`], {
    ...opts(),
    namespace: ns,
  });
  return s.metadata.labels;
}

/** The installer's JSON log line that says the release is unchanged. */
function unchangedLine(stdout: string): Record<string, unknown> {
  const line = stdout.split('\n').find((l) => l.includes('"msg":"unchanged: '));
  if (!line) throw new Error(`no "unchanged" line in:\n${stdout}`);
  return JSON.parse(line);
}

describe('no-op redeploy', () => {
  it('same chart and values: no new revision, "unchanged"; a changed value, a changed chart and --force-upgrade each upgrade', async () => {
    const ns = await createNamespace('noop', opts());
    const values = join(tempDir('noop'), 'customer.yaml');
    writeFileSync(values, 'web:\n  replicaCount: 2\n');
    expect((await install('storefront', ns, ['--values', values])).exitCode).toBe(0);
    const first = await recordLabels(ns, 1);
    expect(first['helm-installer/chart-digest']).toMatch(/^[0-9a-f]{40}$/);
    expect(first['helm-installer/values-digest']).toMatch(/^[0-9a-f]{40}$/);
    // helm keeps them with the release too (helm 4's `get metadata` shows them), not only on the Secret.
    const meta = JSON.parse(
      (
        await execa(helm4, ['get', 'metadata', 'storefront', '-n', ns, '-o', 'json'], {
          env: { KUBECONFIG: kubeconfig() },
        })
      ).stdout,
    );
    expect(meta.labels['helm-installer/chart-digest']).toBe(first['helm-installer/chart-digest']);
    expect(meta.labels['helm-installer/values-digest']).toBe(first['helm-installer/values-digest']);

    expect(first['helm-installer/input-digest']).toMatch(/^[0-9a-f]{40}$/);

    // The same files again (what KOTS renders on most redeploys): decided on the inputs as given,
    // without waiting for helm's merge of the values (the logged digests have no values digest).
    const same = await install('storefront', ns, ['--values', values]);
    expect(same.exitCode, same.stderr).toBe(0);
    const sameLine = unchangedLine(same.stdout);
    expect(sameLine).toMatchObject({
      revision: 1,
      chart: first['helm-installer/chart-digest'],
      input: first['helm-installer/input-digest'],
    });
    expect(sameLine).not.toHaveProperty('values');
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1]);

    // Not waited for either: with a merge that takes a minute (a helm whose values probe sleeps
    // first), the same inputs still end as "unchanged", and no probe ran to its end.
    const slow = join(tempDir('noop-slow-helm'), 'helm');
    const probeFinished = `${slow}.probe-finished`;
    writeFileSync(
      slow,
      `#!/bin/sh\ncase " $* " in *" values-probe "*) sleep 60; touch '${probeFinished}';; esac\nexec '${helm4}' "$@"\n`,
      { mode: 0o755 },
    );
    const notWaited = await install('storefront', ns, ['--values', values], { HELM_BIN: slow });
    expect(notWaited.exitCode, notWaited.stderr).toBe(0);
    expect(unchangedLine(notWaited.stdout)).toMatchObject({ revision: 1, input: first['helm-installer/input-digest'] });
    expect(existsSync(probeFinished)).toBe(false);
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1]);

    // The same answers, written differently (a comment, flow style): equal once merged, as written.
    writeFileSync(values, '# re-rendered by KOTS\nweb: {replicaCount: 2}\n');
    const again = await install('storefront', ns, ['--values', values]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/^helm-installer: unchanged release storefront in namespace /m);
    expect(again.stdout).toContain(
      'unchanged: chart and values equal revision 1, which is deployed and healthy; no upgrade',
    );
    expect(again.stdout).not.toContain('running helm upgrade --install');
    // Decided on the values digest: other bytes, so another input digest, and the same values digest.
    const againLine = unchangedLine(again.stdout);
    expect(againLine).toMatchObject({ revision: 1, values: first['helm-installer/values-digest'] });
    expect(againLine.input).toMatch(/^[0-9a-f]{40}$/);
    expect(againLine.input).not.toBe(first['helm-installer/input-digest']);
    // Read only: the release record and the live workloads; no Lease taken for a no-op.
    expect(again.stdout).not.toContain('lease acquired');
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1]);

    // A changed value upgrades, and the new revision carries a new values digest, same chart digest.
    writeFileSync(values, 'web:\n  replicaCount: 3\n');
    const changed = await install('storefront', ns, ['--values', values]);
    expect(changed.exitCode, changed.stderr).toBe(0);
    expect(changed.stdout).toContain('values or settings changed');
    expect((await history('storefront', ns)).map((h) => [h.revision, h.status])).toEqual([
      [1, 'superseded'],
      [2, 'deployed'],
    ]);
    const second = await recordLabels(ns, 2);
    expect(second['helm-installer/chart-digest']).toBe(first['helm-installer/chart-digest']);
    expect(second['helm-installer/values-digest']).not.toBe(first['helm-installer/values-digest']);

    // --force-upgrade overrides the skip.
    const forced = await install('storefront', ns, ['--values', values, '--force-upgrade']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('upgrading: --force-upgrade');
    expect((await history('storefront', ns)).map((h) => h.revision)).toEqual([1, 2, 3]);

    // A changed chart (one template edited, same version) upgrades.
    const chart = copyChart((dir) => {
      const file = join(dir, 'templates', 'serviceaccount.yaml');
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n# edited by the vendor\n`);
    });
    // The vendor base values as before (they apply to the bundled chart only unless named).
    const newChart = await install('storefront', ns, [
      '--values',
      values,
      '--chart',
      chart,
      '--base-values',
      join(appDir, 'values'),
    ]);
    expect(newChart.exitCode, newChart.stderr).toBe(0);
    expect(newChart.stdout).toContain('chart changed');
    const fourth = await recordLabels(ns, 4);
    expect(fourth['helm-installer/chart-digest']).not.toBe(first['helm-installer/chart-digest']);
    expect(fourth['helm-installer/values-digest']).toBe(second['helm-installer/values-digest']);
  });

  it('an unhealthy release is upgraded even with equal digests (helm waits for it again)', async () => {
    const ns = await createNamespace('noop-unhealthy', opts());
    expect((await install('storefront', ns)).exitCode).toBe(0);
    // Drift: someone scaled the web Deployment up and pinned it to no node; it is not ready.
    await kubectl(
      [
        'patch',
        'deployment',
        'storefront-web',
        '--type',
        'merge',
        '-p',
        JSON.stringify({ spec: { template: { spec: { nodeSelector: { zone: 'nowhere' } } } } }),
      ],
      {
        ...opts(),
        namespace: ns,
      },
    );
    const r = await install('storefront', ns, ['--timeout', '20s']);
    expect(r.stdout).toMatch(/"reason":"not healthy: Deployment\/storefront-web: [^"]+"/);
    expect(r.stdout).toContain('running helm upgrade --install');
    expect((await history('storefront', ns)).length).toBeGreaterThan(1);
  });
});
