// The summary of a plan run, pure: one line per release with what happened to it, the exit code
// (the most severe of the releases'), all within the kubelet's termination-message limits.
import { ExitCode, type InstallerError } from '../errors.js';
import { EXIT_CODE_MEANING, fitSummary } from '../report.js';
import type { SecretRegistry } from '../secrets.js';

export type ReleaseOutcome =
  | { key: string; status: 'done'; action: string; revision?: number; seconds: number }
  | { key: string; status: 'failed'; error: InstallerError; seconds: number }
  | { key: string; status: 'not attempted'; because: string }
  | { key: string; status: 'pruned'; result: string }
  | { key: string; status: 'prune failed'; error: InstallerError };

/**
 * Most severe first: what no retry mends (a bug, bad input, missing RBAC or images) before what
 * a retry may (helm's own failure, a busy release, a cluster that did not answer).
 */
export const SEVERITY: number[] = [
  ExitCode.internal, ExitCode.usage, ExitCode.invalidInput, ExitCode.preflightFailed, ExitCode.helmFailed, ExitCode.releaseBusy, ExitCode.transient,
];

export function planExitCode(outcomes: ReleaseOutcome[]): number {
  const codes = outcomes.flatMap((o) => (o.status === 'failed' || o.status === 'prune failed' ? [o.error.exitCode] : []));
  if (codes.length === 0) return ExitCode.ok;
  return SEVERITY.find((c) => codes.includes(c as ExitCode)) ?? codes[0]!;
}

export function describeOutcome(o: ReleaseOutcome): string[] {
  switch (o.status) {
    case 'done':
      return [`${o.key}: ${o.action}${o.revision ? `, revision ${o.revision}` : ''}, ${o.seconds.toFixed(1)}s`];
    case 'failed': {
      const lines = [`${o.key}: FAILED (exit ${o.error.exitCode}) after ${o.seconds.toFixed(1)}s: ${o.error.message.split('\n')[0]}`];
      return o.error.hint ? [...lines, `  next: ${o.error.hint}`] : lines;
    }
    case 'not attempted':
      return [`${o.key}: not attempted (${o.because})`];
    case 'pruned':
      return [`${o.key}: ${o.result} (no longer in the plan)`];
    case 'prune failed':
      return [`${o.key}: not uninstalled (exit ${o.error.exitCode}): ${o.error.message.split('\n')[0]}`];
  }
}

export function planSummary(outcomes: ReleaseOutcome[], seconds: number, secrets: SecretRegistry): { text: string; exitCode: number } {
  const exitCode = planExitCode(outcomes);
  const count = (s: ReleaseOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  const installed = outcomes.filter((o) => o.status !== 'pruned' && o.status !== 'prune failed').length;
  const tally = [`${count('done')} of ${installed} releases done`, count('failed') && `${count('failed')} failed`, count('not attempted') && `${count('not attempted')} not attempted`, count('pruned') && `${count('pruned')} removed from the plan`]
    .filter(Boolean)
    .join(', ');
  const head = exitCode === ExitCode.ok ? [`helm-installer: release plan done: ${tally}, ${seconds.toFixed(1)}s`] : [`helm-installer FAILED (exit ${exitCode}: ${EXIT_CODE_MEANING[exitCode] ?? 'error'}): ${tally}`];
  const lines = outcomes.flatMap(describeOutcome).map((l) => `  ${secrets.maskText(l)}`);
  return { text: fitSummary(head.map((l) => secrets.maskText(l)), lines, []), exitCode };
}
