// One render per run: with --registry the chart is rendered once for the image plan and once per
// registry-hint set actually checked, and `render` and `install`'s render check reuse the render
// the plan came from instead of asking helm again. Counted through a spy around the real helm 4
// and helm 3 on the bundled chart (its hints pass on the first set), so a stage that starts
// rendering the chart on its own again fails here.
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDir, helm3, helm4, runCli, tempDir } from '../helpers.js';

const dir = tempDir('render-count');
// A cluster address nothing listens on: the install stops at the Lease (exit 5) after its checks.
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
);

function spyOn(major: 3 | 4): { bin: string; calls: () => string[]; reset: () => void } {
  const log = join(dir, `helm${major}-calls.log`);
  const bin = join(dir, `helm${major}-spy`);
  writeFileSync(bin, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${major === 4 ? helm4 : helm3}' "$@"\n`);
  chmodSync(bin, 0o755);
  return {
    bin,
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
    reset: () => rmSync(log, { force: true }),
  };
}

describe.each([4, 3] as const)('renders per run on the bundled chart, helm %i', (major) => {
  const spy = spyOn(major);
  const registry = ['--chart', chartDir, '--registry', 'registry.local:5000/acme'];
  // `helm template <release> <chart>`: the chart's renders, apart from the values probe.
  const renders = () => {
    const templates = spy.calls().filter((c) => c.startsWith('template '));
    return {
      chart: templates.filter((c) => c.includes(chartDir)).length,
      probe: templates.filter((c) => c.includes('values-probe')).length,
    };
  };

  it('images: one render', async () => {
    spy.reset();
    const r = await runCli(['images', ...registry], { env: { HELM_BIN: spy.bin } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(renders()).toEqual({ chart: 1, probe: 0 });
  });

  it('render --registry: the plan and the hint check, nothing rendered again for the output', async () => {
    spy.reset();
    const r = await runCli(['render', ...registry], { env: { HELM_BIN: spy.bin } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('registry hints applied');
    expect(renders()).toEqual({ chart: 2, probe: 1 });
  });

  it("install --registry: the render check reuses the plan's render, the values are merged once", async () => {
    spy.reset();
    const r = await runCli(['install', ...registry, '--skip-preflight', '--connect-timeout', '1s'], {
      env: { HELM_BIN: spy.bin, KUBECONFIG: kubeconfig },
    });
    expect(r.exitCode, r.stderr).toBe(5);
    expect(r.stdout).toContain('registry hints applied');
    expect(renders()).toEqual({ chart: 2, probe: 1 });
    expect(spy.calls().filter((c) => c.startsWith('upgrade'))).toEqual([]);
  });
});
