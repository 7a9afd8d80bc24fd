// An install run: the run context (src/run/run-context.ts) with install's options and its drift
// ignore rules, read once from --drift-ignore and --drift-ignore-file together.
import type { IgnoreRule } from '../drift/ignore-rules.js';
import type { RunContext } from '../run/run-context.js';
import type { InstallOptions } from './install-options.js';

export type { ClusterRun } from '../run/run-context.js';
export { chartLabel } from '../run/run-context.js';

export interface InstallRun extends RunContext<InstallOptions> {
  ignore: IgnoreRule[];
  member?: PlanMember;
}

/** A release installed as one of a release plan's (src/releases/run-graph.ts). */
export interface PlanMember {
  /** Awaited after the checks, before the Lease: the plan's order and its all-checks-first rule. */
  gate(): Promise<void>;
  /** Release labels that mark the release as the app's (helm --labels). */
  labels: Record<string, string>;
  /** What the release's summary said: filled by install/report.ts. */
  outcome?: { action: string; revision?: number; chart?: string };
}

export function installRun(run: RunContext<InstallOptions>, member?: PlanMember): InstallRun {
  return { ...run, ignore: [...run.o.driftIgnore, ...run.o.driftIgnoreFile], member };
}

/** What helm upgrade itself is given besides the plan's values and post-renderer. */
export function applySettings(run: InstallRun): { timeout: string; historyMax: number; helmArgs: string[] } {
  return { timeout: run.o.timeout, historyMax: run.o.historyMax, helmArgs: run.o.helmArgs };
}
