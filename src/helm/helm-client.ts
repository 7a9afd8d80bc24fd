// The helm adapter: every helm operation the installer performs, as typed methods. Argv comes
// from helm-args (pure), running from helm-runner, failures from helm-errors (pure).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  clientRateArgs,
  historyArgs,
  mergedValuesArgs,
  packageArgs,
  rollbackArgs,
  type RollbackArguments,
  templateArgs,
  type TemplateArguments,
  testArgs,
  type TestArguments,
  upgradeInstallArgs,
  type UpgradeArguments,
  uninstallArgs,
  type UninstallArguments,
  type ValuesArguments,
} from './helm-args.js';
import type { HelmBinary } from './helm-binary.js';
import type { HelmTraits } from './helm-traits.js';
import { classifyHelmFailure } from './helm-errors.js';
import {
  type HistoryEntry,
  parseHistory,
  parseProbeValues,
  parseTestSuite,
  parseUpgradeRevision,
  type TestRun,
} from './helm-results.js';
import { HelmRunner } from './helm-runner.js';

export interface HelmClientOptions {
  binary: HelmBinary;
  logger: Logger;
  /** Masks secrets in argv before it is logged. */
  maskArgs: (args: string[]) => string[];
  /** Environment for helm (KUBECONFIG, HELM_PLUGINS, ...); inherits ours. */
  env?: Record<string, string>;
}

export class HelmClient {
  private readonly runner: HelmRunner;
  private readonly merged = new Map<string, Promise<Record<string, unknown>>>();
  /** Before the user's own flags after `--`, so one of theirs (later) still wins. */
  private readonly rate: string[];
  /**
   * Flags every `helm template` of the run gets, so each render sees what helm will see: for
   * render and images the user's (after `--`), for install the cluster's Capabilities (a plain
   * `helm template` uses helm's built-in Kubernetes version and API list, `helm upgrade` the
   * cluster's). Set once, before the first render.
   */
  private renderFlags: string[] | Promise<string[]> = [];

  constructor(private readonly options: HelmClientOptions) {
    this.runner = new HelmRunner(options.binary, options.logger);
    this.rate = clientRateArgs({ ...process.env, ...options.env });
  }

  /** What this helm does differently from the other major version. */
  get traits(): HelmTraits {
    return this.options.binary.traits;
  }

  get version(): string {
    return this.options.binary.version;
  }

  /**
   * Helm's own merge of the user-supplied values. It does not depend on the chart, so a probe
   * chart with no defaults is rendered: no vendor template or schema can fail, and what comes
   * back is exactly what helm layers from these -f files and --set flags.
   */
  mergedValues(values: ValuesArguments, signal?: AbortSignal): Promise<Record<string, unknown>> {
    // Asked once per set of layers and run: install's digests and the registry hints both need
    // the user's layers merged, and each ask is a helm render. The first ask's signal stops it.
    const key = JSON.stringify(values);
    let merged = this.merged.get(key);
    if (!merged) {
      merged = this.mergeValues(values, signal);
      this.merged.set(key, merged);
    }
    return merged.then((v) => structuredClone(v));
  }

  private async mergeValues(values: ValuesArguments, signal?: AbortSignal): Promise<Record<string, unknown>> {
    // The probe chart is written synchronously, so helm starts in this very tick: the install
    // runs it on the other core while loading the Kubernetes client blocks this thread.
    const dir = mkdtempSync(join(process.env.HELM_INSTALLER_TMPDIR ?? tmpdir(), 'helm-installer-values-'));
    try {
      const chart = join(dir, 'values-probe');
      mkdirSync(join(chart, 'templates'), { recursive: true });
      writeFileSync(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: values-probe\nversion: 0.0.0\n');
      writeFileSync(join(chart, 'templates', 'values.yaml'), '{{ toJson .Values }}\n');
      const out = await this.call(mergedValuesArgs('values-probe', chart, values), {
        action: 'reading values',
        release: 'values-probe',
        signal,
      });
      return parseProbeValues(out.stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** A promise (install: the cluster's, still being read) is awaited by the first render; it must not reject. */
  setRenderFlags(flags: string[] | Promise<string[]>): void {
    this.renderFlags = flags;
  }

  async template(a: TemplateArguments, env?: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const out = await this.call(templateArgs(a, await this.renderFlags), {
      action: 'rendering',
      release: a.release,
      env,
      signal,
    });
    return out.stdout;
  }

  /** The revision made (none for a dry run): read from helm's own output, else from its history. */
  async upgradeInstall(
    a: UpgradeArguments,
    opts: { signal?: AbortSignal; env?: Record<string, string> },
  ): Promise<{ revision?: number }> {
    const out = await this.call(this.rateLimited(upgradeInstallArgs(a, this.traits), a.extraArgs.length), {
      action: a.dryRun ? 'dry-run install/upgrade' : 'install/upgrade',
      release: a.release,
      stream: true,
      ...opts,
    });
    if (a.dryRun) return {};
    return {
      revision: parseUpgradeRevision(out.stdout) ?? (await this.history(a.release, a.namespace, 1)).at(-1)?.revision,
    };
  }

  async rollback(a: RollbackArguments, opts: { signal?: AbortSignal }): Promise<void> {
    await this.call(this.rateLimited(rollbackArgs(a, this.traits)), {
      action: `rollback to revision ${a.revision}`,
      release: a.release,
      stream: true,
      ...opts,
    });
  }

  async uninstall(a: UninstallArguments, opts: { signal?: AbortSignal }): Promise<void> {
    await this.call(this.rateLimited(uninstallArgs(a, this.traits)), {
      action: 'uninstall',
      release: a.release,
      stream: true,
      ...opts,
    });
  }

  /**
   * `helm test`: each test hook's phase, and helm's error line when a test failed or ran past the
   * timeout. A helm that could not run the tests at all (no cluster, no release) is thrown.
   */
  async test(a: TestArguments, opts: { signal?: AbortSignal }): Promise<{ runs: TestRun[]; failure?: string }> {
    const args = testArgs(a);
    const out = await this.runner.run({
      args,
      displayArgs: this.options.maskArgs(args),
      stream: true,
      signal: opts.signal,
      env: this.env(),
    });
    const runs = parseTestSuite(out.stdout);
    if (out.ok) return { runs };
    if (out.canceled || runs.length === 0) throw classifyHelmFailure({ release: a.release, action: 'test', ...out });
    const failure = out.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && l !== 'Error: 1 error occurred:')
      .map((l) => l.replace(/^(Error: |\* )/, ''));
    return { runs, failure: failure.join('; ') };
  }

  /** `helm package`: writes `<destination>/<name>-<version>.tgz` (what `helm push` takes). */
  async package(chart: string, destination: string, release: string, signal?: AbortSignal): Promise<void> {
    await this.call(packageArgs(chart, destination), { action: 'packaging the chart', release, signal });
  }

  /** The release's revisions, oldest first; empty when it does not exist. */
  async history(
    release: string,
    namespace: string | undefined,
    max?: number,
    signal?: AbortSignal,
  ): Promise<HistoryEntry[]> {
    const out = await this.runner.run({ args: historyArgs(release, namespace, max), env: this.env(), signal });
    if (!out.ok) {
      if (/release: not found/.test(out.stderr)) return [];
      throw classifyHelmFailure({ release, action: 'reading history', ...out });
    }
    return parseHistory(out.stdout);
  }

  private async call(
    args: string[],
    o: { action: string; release: string; stream?: boolean; signal?: AbortSignal; env?: Record<string, string> },
  ): Promise<{ stdout: string; stderr: string }> {
    const out = await this.runner.run({
      args,
      displayArgs: this.options.maskArgs(args),
      stream: o.stream,
      signal: o.signal,
      env: this.env(o.env),
    });
    if (!out.ok) throw classifyHelmFailure({ release: o.release, action: o.action, ...out });
    return out;
  }

  private rateLimited(args: string[], userArgs = 0): string[] {
    const at = args.length - userArgs;
    return [...args.slice(0, at), ...this.rate, ...args.slice(at)];
  }

  private env(extra?: Record<string, string>): Record<string, string> {
    return { ...this.options.env, ...extra };
  }
}
