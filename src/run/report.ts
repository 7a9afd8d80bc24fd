// Stage "report": the few plain-text lines an admin reads in `kubectl describe` or the log tail.
// The kubelet shows the termination file (at most 4096 bytes) or, when it is empty, the last
// 2048 bytes / 80 lines of the log; so the summary is kept under both and is the last thing
// written. Plain text, never a JSON blob cut in half.
import { existsSync, writeFileSync, writeSync } from 'node:fs';
import { InstallerError } from '../common/errors.js';
import { ExitCode, exitCodeMeaning } from '../common/exit-codes.js';
import type { SecretRegistry } from '../common/secrets.js';

export const SUMMARY_MAX_BYTES = 2000;
export const SUMMARY_MAX_LINES = 40;

export interface SuccessReport {
  release: string;
  namespace?: string;
  action: 'installed' | 'upgraded' | 'dry run' | 'unchanged' | 'drift corrected in';
  revision?: number;
  chart: string;
  seconds: number;
  images?: number;
  /** What else the admin should know (drift found, put back, taken back), one line each. */
  details?: string[];
}

/** Lines of details shown at most; the log has them all. */
const DETAIL_LINES = 12;

export function successSummary(r: SuccessReport): string {
  const details = r.details ?? [];
  const shown =
    details.length > DETAIL_LINES
      ? [...details.slice(0, DETAIL_LINES - 1), `... and ${details.length - DETAIL_LINES + 1} more (see the log)`]
      : details;
  return [
    `helm-installer: ${r.action} release ${r.release}${r.namespace ? ` in namespace ${r.namespace}` : ''}`,
    `  chart: ${r.chart}${r.revision ? `, revision ${r.revision}` : ''}, ${r.seconds.toFixed(1)}s`,
    ...shown.map((l) => `  ${l}`),
  ].join('\n');
}

export interface FailureContext {
  release?: string;
  namespace?: string;
  action: string;
}

/** The failure summary; the same text goes to the termination file. Pure. */
export function failureSummary(error: unknown, ctx: FailureContext, secrets: SecretRegistry): string {
  const e = toInstallerError(error);
  const mask = (l: string) => secrets.maskText(l);
  const head = [
    `helm-installer FAILED (exit ${e.exitCode}: ${exitCodeMeaning(e.exitCode)})`,
    `release: ${ctx.release ?? '(not resolved)'}${ctx.namespace ? `  namespace: ${ctx.namespace}` : ''}  action: ${ctx.action}`,
  ].map(mask);
  const [first = '', ...rest] = e.message.split('\n');
  const cause = [`cause: ${first}`, ...rest].map(mask);
  const tail = [
    ...(e.where && !e.message.includes(e.where) ? [`where: ${e.where}`] : []),
    ...(e.hint ? [`next: ${e.hint}`] : []),
  ].map(mask);
  return fitSummary(head, cause, tail);
}

export function toInstallerError(error: unknown): InstallerError {
  if (error instanceof InstallerError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new InstallerError(ExitCode.internal, `internal error: ${message}`, {
    hint: 'This is a bug in helm-installer; report it with the log above.',
    cause: error,
  });
}

/**
 * Fits head + middle + tail within the kubelet's limits. The middle (helm's details) is what
 * gets cut, so the cause's first line and the next step always survive.
 */
export function fitSummary(head: string[], middle: string[], tail: string[]): string {
  const clip = (l: string) => (l.length > 300 ? `${l.slice(0, 297)}...` : l);
  const fixed = [...head, ...tail].map(clip);
  const keep: string[] = [];
  let bytes = Buffer.byteLength(fixed.join('\n')) + 40;
  for (const line of middle.map(clip)) {
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > SUMMARY_MAX_BYTES || fixed.length + keep.length + 1 >= SUMMARY_MAX_LINES) {
      keep.push('  ... (more in the log above)');
      break;
    }
    keep.push(line);
    bytes += size;
  }
  return [...head.map(clip), ...keep, ...tail.map(clip)].join('\n');
}

/**
 * The one writer of what a run ends with: its summary on stderr (the last lines of the Job's log)
 * and its termination message in the file the kubelet reads (`terminationLog`, when there is
 * one). Every command, main.ts's failure summary included, ends through here.
 */
export function writeSummary(
  terminationLog: string | undefined,
  end: { summary?: string; terminationMessage?: string },
): void {
  if (end.terminationMessage !== undefined && terminationLog)
    writeTerminationMessage(terminationLog, end.terminationMessage);
  if (end.summary !== undefined) writeSync(2, `${end.summary}\n`);
}

/** Best effort: outside a pod the path usually does not exist, and that is fine. */
function writeTerminationMessage(path: string, text: string): boolean {
  try {
    writeFileSync(path, `${text}\n`);
    return true;
  } catch {
    return false;
  }
}

const DEFAULT_TERMINATION_LOG = '/dev/termination-log';

/**
 * Where the termination message goes, read from argv and env before any option is parsed: a
 * usage error must leave a message too. The default path is only used where the kubelet made it,
 * so a run on a workstation does not create /dev/termination-log.
 */
export function terminationLogPath(args: string[], env: NodeJS.ProcessEnv): string | undefined {
  const end = args.indexOf('--');
  const own = end < 0 ? args : args.slice(0, end);
  let fromFlag: string | undefined;
  own.forEach((a, i) => {
    if (a === '--termination-log' && own[i + 1] !== undefined) fromFlag = own[i + 1];
    else if (a.startsWith('--termination-log=')) fromFlag = a.slice('--termination-log='.length);
  });
  const fromEnv = env.HELM_INSTALLER_TERMINATION_LOG?.trim();
  const path = fromFlag ?? (fromEnv ? fromEnv : undefined);
  if (path) return path;
  return existsSync(DEFAULT_TERMINATION_LOG) ? DEFAULT_TERMINATION_LOG : undefined;
}
