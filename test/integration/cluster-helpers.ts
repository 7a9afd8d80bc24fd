// Helpers for the integration tests: run the built CLI against the test cluster, and read the
// cluster itself (helm's release records, the API) rather than the installer's own words.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, inject } from 'vitest';
import { decodeReleasePayload, encodeReleasePayload, setReleaseStatus } from '../../src/cluster/release-secrets.js';
import { createNamespace, deleteNamespace, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { REPORTING_CONTROLLER } from '../../src/tell/event-body.js';
import { chartDir, cliPath, helm4, installerNodeArgs, runCli, tempDir, type CliResult } from '../helpers.js';

export const kubeconfig = (): string => inject('kubeconfig');

/**
 * A maker of fresh namespaces that are deleted when the file's tests end: their releases hold
 * database claims from the cluster's volume pool, and the pool is topped up only at set-up.
 */
export function namespacesDeletedAfterAll(): (prefix: string) => Promise<string> {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.map((ns) => deleteNamespace(ns, { kubeconfig: kubeconfig() })));
  });
  return async (prefix) => {
    const ns = await createNamespace(prefix, { kubeconfig: kubeconfig() });
    made.push(ns);
    return ns;
  };
}

/** One chart's install: the storefront chart unless args give --chart (the bundled app is a release plan). */
export async function install(
  release: string,
  namespace: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return runCli(['install', '--release', release, '--namespace', namespace, '--timeout', '120s', ...args], {
    env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_CHART: chartDir, ...env },
  });
}

/**
 * The built CLI started as the Job starts it, in its own process group, for the tests that signal
 * it mid-run: `logged` waits for a text in its JSON log as it comes; `child.kill('SIGTERM')`
 * signals the installer alone (it forwards the signal to helm), `killGroup('SIGKILL')` takes its
 * helm with it, as a deleted pod does. No SIGKILL follows a SIGTERM by itself: the clean stop
 * the test waits for may take longer than execa's default grace.
 */
export function spawnCli(args: string[], env: Record<string, string> = {}) {
  const child = execa(process.execPath, [...installerNodeArgs, cliPath, ...args], {
    env: { KUBECONFIG: kubeconfig(), HELM_INSTALLER_TERMINATION_LOG: '/nonexistent/termination-log', ...env },
    reject: false,
    detached: true,
    forceKillAfterDelay: false,
  });
  let seen = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
  });
  const logged = (text: string, timeoutMs = 90_000) =>
    waitFor(`the installer to log ${text}`, () => seen.includes(text), { timeoutMs, intervalMs: 20 });
  const killGroup = (signal: NodeJS.Signals) => process.kill(-child.pid!, signal);
  return { child, logged, killGroup };
}

/** The helm runs an install logged at --log-level debug ("running helm"), in order. */
export function helmCalls(stdout: string): { helm: string; argv: string[] }[] {
  return stdout
    .split('\n')
    .filter((l) => l.includes('"msg":"running helm"'))
    .map((l) => JSON.parse(l) as { helm: string; argv: string[] });
}

export interface Revision {
  revision: number;
  status: string;
  chart: string;
  description: string;
}

export async function history(release: string, namespace: string, bin = helm4): Promise<Revision[]> {
  const r = await execa(bin, ['history', release, '--namespace', namespace, '-o', 'json'], {
    env: { KUBECONFIG: kubeconfig() },
    reject: false,
  });
  if (r.exitCode !== 0) {
    if (/not found/.test(r.stderr)) return [];
    throw new Error(r.stderr);
  }
  return JSON.parse(r.stdout) as Revision[];
}

/** helm's stored release (hooks with their last run, the values, the manifest). */
export async function releaseRecord(
  release: string,
  namespace: string,
): Promise<{
  version: number;
  info: { status: string };
  config: Record<string, unknown>;
  hooks?: { name: string; kind: string; last_run?: { phase: string } }[];
}> {
  const r = await execa(helm4, ['status', release, '--namespace', namespace, '-o', 'json', '--show-resources=false'], {
    env: { KUBECONFIG: kubeconfig() },
    reject: false,
  });
  if (r.exitCode !== 0) {
    const fallback = await execa(helm4, ['status', release, '--namespace', namespace, '-o', 'json'], {
      env: { KUBECONFIG: kubeconfig() },
    });
    return JSON.parse(fallback.stdout);
  }
  return JSON.parse(r.stdout);
}

export async function kinds(namespace: string, kind: string): Promise<any[]> {
  return (await getJson<{ items: any[] }>(['get', kind], { namespace, kubeconfig: kubeconfig() })).items;
}

/** A copy of the bundled chart to change (a newer version, a dropped resource). */
export function copyChart(change: (dir: string) => void): string {
  const dir = join(tempDir('chart-copy'), 'storefront');
  cpSync(chartDir, dir, { recursive: true });
  change(dir);
  return dir;
}

export function removeFile(dir: string, rel: string): void {
  rmSync(join(dir, rel));
}

/** A deployed revision left pending-upgrade, as a helm killed mid-upgrade leaves it. */
export async function markPending(namespace: string, release: string, revision: number): Promise<void> {
  const name = `sh.helm.release.v1.${release}.v${revision}`;
  const secret = await getJson(['get', 'secret', name], { kubeconfig: kubeconfig(), namespace });
  const json = setReleaseStatus(
    decodeReleasePayload(Buffer.from(secret.data.release, 'base64')),
    'deployed',
    'pending-upgrade',
    'Upgrade in progress',
  );
  const patch = {
    metadata: { labels: { status: 'pending-upgrade' } },
    data: { release: encodeReleasePayload(json).toString('base64') },
  };
  await kubectl(['patch', 'secret', name, '--type=merge', '-p', JSON.stringify(patch)], {
    kubeconfig: kubeconfig(),
    namespace,
  });
}

export interface EventJson {
  reason: string;
  type: string;
  action: string;
  note: string;
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  regarding: Record<string, string>;
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
}

/** The installer's Events in a namespace, oldest first (events.k8s.io/v1, as written). */
export async function installerEvents(namespace: string): Promise<EventJson[]> {
  const list = await getJson<{ items: EventJson[] }>(['get', 'events.events.k8s.io'], {
    kubeconfig: kubeconfig(),
    namespace,
  });
  return list.items
    .filter((e) => e.reportingController === REPORTING_CONTROLLER)
    .sort((a, b) => a.eventTime.localeCompare(b.eventTime));
}
