// When the image rewrite truly cannot proceed (an image reference the runtime would refuse), the
// installer shows the post-renderer's own report (document, kind/name, template, cause), exits 3,
// and never claims a release was touched: helm only says "plugin exited with error", and helm stops
// before any release when its post-renderer fails. Through the built CLI, with a spy around the
// real helm 4 and helm 3 that records every helm call.
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helm3, helm4, repoRoot, runCli, tempDir } from '../helpers.js';

const CHART = join(repoRoot, 'test/fixtures/charts/go-yaml-strings');
const dir = tempDir('post-render-failure');
// A cluster address nothing listens on: if an upgrade ever started it would fail with exit 5.
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
);

function spyOn(major: 3 | 4): { bin: string; calls: () => string[] } {
  const log = join(dir, `helm${major}-calls.log`);
  const bin = join(dir, `helm${major}-spy`);
  writeFileSync(bin, `#!/bin/sh\necho "$*" >> '${log}'\nexec '${major === 4 ? helm4 : helm3}' "$@"\n`);
  chmodSync(bin, 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) };
}

describe.each([4, 3] as const)('an image the rewrite cannot handle, helm %i', (major) => {
  const spy = spyOn(major);
  const args = ['--chart', CHART, '--registry', 'registry.local:5000/app', '--set', 'image=Acme/Web:1'];

  function expectReport(stderr: string) {
    // The run's image plan (built from helm's rendering before the post-renderer runs) refuses it
    // first with the same report; the post-renderer's own report is the fallback for anything
    // only helm 4's re-serialised stream shows.
    expect(stderr).toMatch(
      /^cause: (The image rewrite \(post-renderer\) stopped before helm touched the cluster: )?Invalid image reference "Acme\/Web:1": repository "Web" must be lowercase/m,
    );
    // Which document helm 4 hands over first is helm's business; that it is named is ours.
    expect(stderr).toMatch(
      /\(document \d+: Deployment "go-yaml-strings-web", spec\.template\.spec\.containers\[0\]\.image, line \d+ of the rendered manifests\)/,
    );
    expect(stderr).toMatch(
      /^where: go-yaml-strings\/templates\/deployment\.yaml \(key spec\.template\.spec\.containers\[0\]\.image\)$/m,
    );
    expect(stderr).not.toMatch(/marked failed|rolled back|exited with error/);
  }

  it('render exits 3 with the report', async () => {
    const r = await runCli(['render', ...args], { env: { HELM_BIN: spy.bin } });
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stdout).toBe('');
    expectReport(r.stderr);
  });

  it('install exits 3 with the report and never starts an upgrade', async () => {
    const r = await runCli(['install', ...args], { env: { HELM_BIN: spy.bin, KUBECONFIG: kubeconfig } });
    expect(r.exitCode, r.stderr).toBe(3);
    expectReport(r.stderr);
    expect(spy.calls().filter((c) => c.startsWith('upgrade') || c.startsWith('history'))).toEqual([]);
  });
});
