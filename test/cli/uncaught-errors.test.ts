// Every failure leaves a termination message (issue 9, item 8), also one that escapes main()'s
// try: an exception thrown in a callback, a promise rejected with no one awaiting it. The fault
// is planted in the real built CLI through Node's own --import: a listener that throws (or
// rejects) when the test sends SIGUSR2, while `install` retries a cluster nothing listens on.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chartDir, helm4, startCli, tempDir } from '../helpers.js';

const dir = tempDir('uncaught');
const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: t}}]\n`,
);

async function faultDuringInstall(fault: string, id: string) {
  const plant = join(dir, `${id}.mjs`);
  writeFileSync(plant, `process.on('SIGUSR2', () => { ${fault} });\n`);
  const termination = join(dir, `${id}-termination-log`);
  writeFileSync(termination, '');
  const child = startCli(['install', '--set', 'db.password=s3cr3t-Uncaught'], {
    nodeArgs: ['--import', plant],
    env: {
      HELM_BIN: helm4,
      KUBECONFIG: kubeconfig,
      HELM_INSTALLER_TERMINATION_LOG: termination,
      HELM_INSTALLER_CONNECT_TIMEOUT: '120s',
      HELM_INSTALLER_CHART: chartDir,
    },
    timeoutMs: 150_000,
  });
  // Once the run is retrying the cluster, main() is well under way.
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('cluster not reachable')) resolve();
    });
  });
  child.kill('SIGUSR2');
  const r = await child;
  return {
    exitCode: r.exitCode,
    stdout: String(r.stdout),
    stderr: String(r.stderr),
    termination: readFileSync(termination, 'utf8'),
  };
}

describe('a failure outside main() still ends with the summary and the termination message', () => {
  it.each([
    ['an exception thrown in a callback', "throw new Error('planted fault: thrown')", 'thrown', 'uncaught exception'],
    [
      'a promise rejected with no one awaiting it',
      "Promise.reject(new Error('planted fault: rejected'))",
      'rejected',
      'unhandled rejection',
    ],
  ])('%s: exit 1, the summary last on stderr and in the termination file', async (_name, fault, id, origin) => {
    const r = await faultDuringInstall(fault, id);
    expect(r.exitCode, r.stderr).toBe(1);
    const summary = r.stderr.slice(r.stderr.indexOf('helm-installer FAILED'));
    expect(summary).toMatch(/^helm-installer FAILED \(exit 1: internal error\)\n/);
    expect(summary).toContain(`cause: internal error: planted fault: ${id}\n`);
    // Whichever stage the fault met (the chart values are parsed while helm renders, one turn later).
    expect(summary).toMatch(
      /^release: storefront {2}namespace: default {2}action: (connecting to the cluster|reading release state|reading the chart values|render check|registry preflight|waiting for the release lease)$/m,
    );
    expect(summary).toMatch(/^next: This is a bug in helm-installer/m);
    expect(r.stderr.trimEnd().endsWith(summary.trimEnd())).toBe(true);
    expect(r.termination.trim()).toBe(summary.trim());
    const logged = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(logged.at(-1)).toMatchObject({ level: 50, msg: `${origin}: internal error: planted fault: ${id}` });
    expect(`${r.stdout}${r.stderr}${r.termination}`).not.toContain('s3cr3t-Uncaught');
  });
});
