// An install run is the run context (src/run/run-context.ts) with install's options; its drift
// ignore rules are read from --drift-ignore and --drift-ignore-file together.
import type { IgnoreRule } from '../drift/ignore-rules.js';
import type { PlanMember, RunContext } from '../run/run-context.js';
import type { InstallOptions } from './install-options.js';

export type InstallRun = RunContext<InstallOptions>;

/** The run as one release of a release plan (`member`), or alone. */
export function installRun(run: InstallRun, member?: PlanMember): InstallRun {
  return member ? { ...run, member } : run;
}

/** The drift ignore rules: the inline ones, then the file's. */
export function ignoreRules(run: Pick<InstallRun, 'o'>): IgnoreRule[] {
  return [...run.o.driftIgnore, ...run.o.driftIgnoreFile];
}

/** What helm upgrade itself is given besides the plan's values and post-renderer. */
export function applySettings(run: InstallRun): { timeout: string; historyMax: number; helmArgs: string[] } {
  return { timeout: run.o.timeout, historyMax: run.o.historyMax, helmArgs: run.o.helmArgs };
}
