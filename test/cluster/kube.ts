// Small helpers for tests that talk to the local cluster through the pinned kubectl.
// No vitest import here, so scripts (the demo) can use them too: pass the kubeconfig from
// `inject('kubeconfig')`, or rely on $KUBECONFIG, which the global setup sets.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import { kubectlPath } from './paths.js';

export { FAKE_NODE_NAME, STORAGE_CLASS } from './bootstrap-objects.js';
export { KWOK_PHASE_ANNOTATION } from './kwok-stages.js';

export interface KubectlOptions {
  /** Defaults to $KUBECONFIG. */
  kubeconfig?: string;
  namespace?: string;
  /** Written to kubectl's stdin (for `apply -f -`). */
  input?: string;
  /** When false, a non-zero exit is returned instead of thrown. Default true. */
  reject?: boolean;
  timeoutMs?: number;
}

export interface KubectlResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export function resolveKubeconfig(explicit?: string): string {
  const kubeconfig = explicit ?? process.env.KUBECONFIG;
  if (!kubeconfig) throw new Error('no kubeconfig: pass one, or set KUBECONFIG (the vitest global setup does)');
  return kubeconfig;
}

/** Runs the pinned kubectl against the test cluster. */
export async function kubectl(args: string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const argv = [...(opts.namespace ? ['--namespace', opts.namespace] : []), ...args];
  const result = await execa(kubectlPath(), argv, {
    env: { KUBECONFIG: resolveKubeconfig(opts.kubeconfig) },
    input: opts.input,
    reject: false,
    timeout: opts.timeoutMs ?? 60_000,
    stripFinalNewline: false,
  });
  const out: KubectlResult = {
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? ''),
    exitCode: result.exitCode ?? -1,
  };
  if (out.exitCode !== 0 && opts.reject !== false) {
    const why = result.timedOut ? 'timed out' : `exit ${out.exitCode}`;
    throw new Error(`kubectl ${argv.join(' ')}: ${why}\n${out.stderr.trim()}`);
  }
  return out;
}

/** `kubectl get ... -o json`, parsed. */
export async function getJson<T = any>(args: string[], opts: KubectlOptions = {}): Promise<T> {
  const { stdout } = await kubectl([...args, '-o', 'json'], opts);
  return JSON.parse(stdout) as T;
}

/** Server-side apply of one or more YAML documents. */
export async function applyYaml(yamlText: string, opts: KubectlOptions = {}): Promise<void> {
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], { ...opts, input: yamlText });
}

/**
 * Polls `probe` until it returns something other than undefined/null/false, and returns it.
 * Errors thrown by the probe count as "not yet"; the last one is in the timeout message.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 60_000, intervalMs = 500 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await sleep(intervalMs);
  }
}

/** Creates a namespace with a unique name (`<prefix>-<random>`), for tests that run side by side. */
export async function createNamespace(prefix: string, opts: KubectlOptions = {}): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await kubectl(['create', 'namespace', name], opts);
  return name;
}

/** Deletes a namespace without waiting for its contents to go. */
export async function deleteNamespace(name: string, opts: KubectlOptions = {}): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--wait=false', '--ignore-not-found'], opts);
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
}

/** The status of condition `type` on an object's `.status.conditions`, if present. */
export function conditionOf(obj: { status?: { conditions?: Condition[] } }, type: string): Condition | undefined {
  return obj.status?.conditions?.find((c) => c.type === type);
}
