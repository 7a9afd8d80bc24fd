// Helm's client-side rate limit (src/helm/helm-args.ts, clientRateArgs) reaches helm's own
// command line, read from the installer's debug log of what it ran: the same argv the bench's
// plain helm replays. Expected argv written by hand.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNamespace } from '../cluster/kube.js';
import { tempDir } from '../helpers.js';
import { install, kubeconfig } from './cluster-helpers.js';

function tinyChart(): string {
  const chart = join(tempDir('rate'), 'tiny');
  mkdirSync(join(chart, 'templates'), { recursive: true });
  writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: tiny\nversion: 0.1.0\n');
  writeFileSync(
    join(chart, 'templates', 'cm.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tiny}\ndata: {a: "1"}\n',
  );
  return chart;
}

/** The `helm upgrade` argv the installer logged (--log-level debug: one JSON object per line). */
function upgradeArgv(stdout: string): string[] {
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { helm?: string; argv?: string[] };
    if (entry.helm === 'upgrade' && entry.argv) return entry.argv;
  }
  throw new Error(`no helm upgrade argv logged:\n${stdout.slice(-2000)}`);
}

describe("helm's client rate limit", () => {
  it('helm upgrade gets --qps 50 --burst-limit 300 (before the flags after --) unless HELM_QPS / HELM_BURST_LIMIT are set; a flag after -- wins', async () => {
    const chart = tinyChart();
    const ns = await createNamespace('rate', { kubeconfig: kubeconfig() });

    const first = await install('tiny', ns, ['--chart', chart, '--log-level', 'debug']);
    expect(first.exitCode, first.stderr).toBe(0);
    const defaults = upgradeArgv(first.stdout);
    expect(defaults.slice(0, 2)).toEqual(['upgrade', '--install']);
    expect(defaults.slice(-4)).toEqual(['--qps', '50', '--burst-limit', '300']);

    const second = await install(
      'tiny',
      ns,
      ['--chart', chart, '--log-level', 'debug', '--force-upgrade', '--', '--qps', '20'],
      { HELM_QPS: '7' },
    );
    expect(second.exitCode, second.stderr).toBe(0);
    const argv = upgradeArgv(second.stdout);
    expect(argv.filter((a) => a === '--qps' || a === '--burst-limit')).toEqual(['--burst-limit', '--qps']);
    expect(argv.slice(-4)).toEqual(['--burst-limit', '300', '--qps', '20']);
  });
});
