// The summary of a plan run, pure: one line per release with what happened to it, the exit code
// (the most severe of the releases'), all within the kubelet's termination-message limits.
import { ExitCode, exitCodeMeaning, mostSevereExitCode } from '../common/exit-codes.js';
import { fitSummary } from '../run/report.js';
import type { SecretRegistry } from '../common/secrets.js';
import type { AppRevision } from './app-revision.js';
import type { ReleaseOutcome } from './release-outcome.js';
import { describeRollback, type RollbackResult } from './app-rollback.js';

export function planExitCode(outcomes: ReleaseOutcome[]): number {
  return mostSevereExitCode(
    outcomes.flatMap((o) => (o.status === 'failed' || o.status === 'prune failed' ? [o.error.exitCode] : [])),
  );
}

function describeOutcome(o: ReleaseOutcome): string[] {
  switch (o.status) {
    case 'done':
      return [`${o.key}: ${o.action}${o.revision ? `, revision ${o.revision}` : ''}, ${o.seconds.toFixed(1)}s`];
    case 'failed': {
      const lines = [
        `${o.key}: FAILED (exit ${o.error.exitCode}) after ${o.seconds.toFixed(1)}s: ${o.error.message.split('\n')[0]}`,
      ];
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

/** The app revision this run made, and its rollback when it failed. */
export interface AppSummary {
  revision: AppRevision;
  rollback?: RollbackResult[];
}

/** `app revision 3 deployed` / `app revision 3 failed; the app is back at app revision 2` / ... */
export function appLine(r: AppRevision): string {
  const back =
    r.rolledBackTo !== undefined
      ? `app revision ${r.rolledBackTo}`
      : 'where it was before its first install (nothing of it installed)';
  switch (r.status) {
    case 'deployed':
      return `app revision ${r.revision} deployed`;
    case 'failed':
      return `app revision ${r.revision} failed; releases left as they are (--app-rollback never)`;
    case 'nothing changed':
      return `app revision ${r.revision} failed and changed no release: the app is at ${back}`;
    case 'rolled back':
      return `app revision ${r.revision} failed; every release it changed went back: the app is at ${back}`;
    case 'rollback failed':
      return `app revision ${r.revision} failed and going back to ${back} did not finish: see "app rollback" below`;
  }
}

export function planSummary(
  outcomes: ReleaseOutcome[],
  seconds: number,
  secrets: SecretRegistry,
  app?: AppSummary,
): { text: string; exitCode: number } {
  const rollbackFailed = (app?.rollback ?? []).filter((r) => !r.done);
  const exitCode =
    rollbackFailed.length > 0
      ? mostSevereExitCode([planExitCode(outcomes), ExitCode.helmFailed])
      : planExitCode(outcomes);
  const count = (s: ReleaseOutcome['status']) => outcomes.filter((o) => o.status === s).length;
  const installed = outcomes.filter((o) => o.status !== 'pruned' && o.status !== 'prune failed').length;
  const tally = [
    `${count('done')} of ${installed} releases done`,
    count('failed') && `${count('failed')} failed`,
    count('not attempted') && `${count('not attempted')} not attempted`,
    count('pruned') && `${count('pruned')} removed from the plan`,
  ]
    .filter(Boolean)
    .join(', ');
  // The app revision the cluster is left at, in the first line: what a termination message shows first.
  const head =
    exitCode === ExitCode.ok
      ? [
          `helm-installer: release plan done${app ? `, ${appLine(app.revision)}` : ''}: ${tally}, ${seconds.toFixed(1)}s`,
        ]
      : [
          `helm-installer FAILED (exit ${exitCode}: ${exitCodeMeaning(exitCode)}): ${tally}${app ? `; ${appLine(app.revision)}` : ''}`,
        ];
  const rollbackLines = (app?.rollback ?? []).map((r) => `app rollback: ${describeRollback(r)}`);
  const lines = [...outcomes.flatMap(describeOutcome), ...rollbackLines].map((l) => `  ${secrets.maskText(l)}`);
  return {
    text: fitSummary(
      head.map((l) => secrets.maskText(l)),
      lines,
      [],
    ),
    exitCode,
  };
}
