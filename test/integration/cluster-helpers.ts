// Helpers for the integration tests: run the built CLI against the test cluster, and read the
// cluster itself (helm's release records, the API) rather than the installer's own words.
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, inject } from 'vitest';
import { decodeReleasePayload, encodeReleasePayload, setReleaseStatus } from '../../src/cluster/release-secrets.js';
import { createNamespace, deleteNamespace, getJson, kubectl, waitFor } from '../cluster/kube.js';
import { REPORTING_CONTROLLER } from '../../src/tell/event-body.js';
import { chartDir, cliResult, helm4, runCli, startCli, tempDir, type CliResult } from '../helpers.js';

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
 * it mid-run: `logged` waits for a text in its JSON log as it comes, `waitFor` for a state of the
 * cluster, each failing at once, with its output, should the run end first; `child.kill('SIGTERM')`
 * signals the installer alone (it forwards the signal to helm), `killGroup('SIGKILL')` takes its
 * helm with it, as a deleted pod does (killMidRun does either at a point it waits for).
 */
export function spawnCli(args: string[], env: Record<string, string> = {}) {
  const child = startCli(args, { env: { KUBECONFIG: kubeconfig(), ...env }, detached: true, timeoutMs: 0 });
  let seen = '';
  child.stdout.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
  });
  let ended: CliResult | undefined;
  void child.then((r) => (ended = cliResult(r)));
  /** `probe` until it holds, unless the run ends first (sampled before the probe: a last look counts). */
  const waitForState = async <T>(what: string, probe: Probe<T>, options: WaitOptions = {}): Promise<T> => {
    const seenOrEnd = await waitFor<{ value: T } | { over: CliResult }>(
      what,
      async () => {
        const over = ended;
        const value = await Promise.resolve(probe()).catch((error: unknown) => {
          if (over) return undefined;
          throw error;
        });
        if (value !== undefined && value !== null && value !== false) return { value: value as T };
        return over ? { over } : undefined;
      },
      { timeoutMs: 90_000, intervalMs: 200, ...options },
    );
    if ('over' in seenOrEnd)
      throw new Error(
        `the installer ended (exit ${seenOrEnd.over.exitCode}) before ${what}:\n${seenOrEnd.over.stdout.slice(-2000)}\n${seenOrEnd.over.stderr.slice(-2000)}`,
      );
    return seenOrEnd.value;
  };
  const logged = (text: string, timeoutMs = 90_000) =>
    waitForState(`the installer to log ${text}`, () => seen.includes(text), { timeoutMs, intervalMs: 20 });
  const killGroup = (signal: NodeJS.Signals) => process.kill(-child.pid!, signal);
  return { child, logged, waitFor: waitForState, killGroup };
}

/**
 * An install of the storefront chart alone (the bundled app is a release plan; a case's --chart
 * wins) started for a test to signal. No fail-fast: a run given web.nodeSelector.zone=nowhere hangs
 * on pods no node takes until signalled (webUnschedulable tells when helm waits for them).
 */
export function spawnStorefront(namespace: string, args: string[], env: Record<string, string> = {}): RunningCli {
  return spawnCli(['install', '--release', 'storefront', '--namespace', namespace, ...args], {
    HELM_INSTALLER_CHART: chartDir,
    HELM_INSTALLER_FAIL_FAST_AFTER: '0',
    ...env,
  });
}

/** For waitForRelease: helm has applied a storefront run's zone=nowhere change and waits for its pods. */
export const webUnschedulable = (namespace: string) => ({
  what: 'the web Deployment changed',
  probe: async () =>
    (await getJson(['get', 'deployment', 'storefront-web'], { kubeconfig: kubeconfig(), namespace })).spec.template.spec
      .nodeSelector?.zone === 'nowhere',
});

export type RunningCli = ReturnType<typeof spawnCli>;
type Probe<T> = () => Promise<T | undefined | null | false> | T | undefined | null | false;
interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Stops a run mid-way once `reached` (its `logged`, its `waitFor`, a waitForRelease given the run)
 * resolves: SIGKILL to its process group by default, as a deleted pod or a lost node ends it, helm
 * included; SIGTERM to the installer alone, as a pod's deletion begins. Returns what the wait saw
 * and how the run ended.
 */
export async function killMidRun<T>(
  run: RunningCli,
  reached: Promise<T>,
  signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL',
): Promise<{ seen: T; result: Awaited<RunningCli['child']> }> {
  const seen = await reached.catch((error: unknown) => {
    // Not left running (its own group, no timeout) when the point never came.
    if (run.child.exitCode === null && run.child.signalCode === null) run.killGroup('SIGKILL');
    throw error;
  });
  if (signal === 'SIGKILL') run.killGroup('SIGKILL');
  else run.child.kill('SIGTERM');
  return { seen, result: await run.child };
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

/**
 * Polls helm's history of a release until its latest revision has `status` (and `revision`, and
 * `also` holds, when given), for at most `timeoutMs`; returns that revision. Failing, it names what
 * it waited for and the history it saw last. Given the run that should get it there, it fails at
 * once should the run end first.
 */
export async function waitForRelease(
  release: string,
  namespace: string,
  want: { status: string; revision?: number },
  options: WaitOptions & {
    bin?: string;
    run?: RunningCli;
    also?: { what: string; probe: () => Promise<boolean> };
  } = {},
): Promise<Revision> {
  const { bin = helm4, run, also, timeoutMs = 90_000, intervalMs = 200 } = options;
  let last: Revision[] = [];
  const what = `release ${namespace}/${release} ${want.status}${want.revision ? ` at revision ${want.revision}` : ''}${also ? ` with ${also.what}` : ''}`;
  const probe = async () => {
    last = await history(release, namespace, bin);
    const latest = last.at(-1);
    if (latest?.status !== want.status || (want.revision && latest.revision !== want.revision)) return undefined;
    return (!also || (await also.probe())) && latest;
  };
  try {
    return await (run
      ? run.waitFor(what, probe, { timeoutMs, intervalMs })
      : waitFor(what, probe, { timeoutMs, intervalMs }));
  } catch (error) {
    const seen = last.map((r) => `${r.revision} ${r.status}`).join(', ') || 'no revision';
    throw new Error(`${(error as Error).message}; its history then: ${seen}`, { cause: error });
  }
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
