// The one table of exit codes. Everything else derives from it: the `ExitCode` names the code
// throws, the meaning the summary prints, the order in which a plan's failures rank, and which
// codes a Job retry can help (the manifests' podFailurePolicy and the README's table are checked
// against it by test/common/exit-codes.test.ts). A new code is one row here plus its README row.

interface ExitCodeRow {
  code: number;
  /** The short meaning the summary line prints after "exit N:". */
  meaning: string;
  /**
   * Whether running the same Job again can help: a Job's podFailurePolicy fails at once on the
   * codes that say no (FailJob) and lets backoffLimit retry the others.
   */
  retryHelps: boolean;
  /**
   * Rank among a plan's failures, 1 = most severe: what no retry mends (a bug, bad input,
   * missing RBAC or images) before what a retry may (helm's own failure, a busy release, a
   * cluster that did not answer). Absent for codes that are not failures.
   */
  severity?: number;
}

const rows = {
  ok: { code: 0, meaning: 'success', retryHelps: false },
  internal: { code: 1, meaning: 'internal error', retryHelps: false, severity: 1 },
  usage: { code: 2, meaning: 'usage error', retryHelps: false, severity: 2 },
  invalidInput: { code: 3, meaning: 'invalid input', retryHelps: false, severity: 3 },
  helmFailed: { code: 4, meaning: 'helm operation failed', retryHelps: false, severity: 5 },
  transient: {
    code: 5,
    meaning: 'cluster unreachable or interrupted; retrying may help',
    retryHelps: true,
    severity: 7,
  },
  preflightFailed: { code: 6, meaning: 'preflight check failed', retryHelps: false, severity: 4 },
  releaseBusy: { code: 7, meaning: 'release busy', retryHelps: true, severity: 6 },
  /** `plan`: the install would change something (like terraform's and helm-diff's --detailed-exitcode). Not an error. */
  changesPlanned: {
    code: 10,
    meaning: 'the install would change something (plan only; not an error)',
    retryHelps: false,
  },
} as const satisfies Record<string, ExitCodeRow>;

type Rows = typeof rows;

/** The documented exit codes by name (README "Exit codes"). */
export const ExitCode = Object.fromEntries(Object.entries(rows).map(([name, row]) => [name, row.code])) as {
  readonly [K in keyof Rows]: Rows[K]['code'];
};
export type ExitCode = Rows[keyof Rows]['code'];

const byCode = new Map<number, ExitCodeRow>(Object.values(rows).map((row) => [row.code, row]));

/** Every documented code, ascending. */
export const EXIT_CODES: readonly number[] = [...byCode.keys()].sort((a, b) => a - b);

/** What a code means, for "exit N: <meaning>"; an undocumented code is just an error. */
export function exitCodeMeaning(code: number): string {
  return byCode.get(code)?.meaning ?? 'error';
}

/** The non-zero codes a Job retry cannot mend: podFailurePolicy's FailJob list. */
export function codesRetryCannotMend(): number[] {
  return EXIT_CODES.filter((code) => code !== 0 && !byCode.get(code)!.retryHelps);
}

/** The most severe of several failures' codes (0 when none failed). */
export function mostSevereExitCode(codes: readonly number[]): number {
  const failures = codes.filter((c) => c !== rows.ok.code);
  if (failures.length === 0) return rows.ok.code;
  const rank = (c: number) => byCode.get(c)?.severity ?? Number.MAX_SAFE_INTEGER;
  return failures.reduce((worst, c) => (rank(c) < rank(worst) ? c : worst));
}
