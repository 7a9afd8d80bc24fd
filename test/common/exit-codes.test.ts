// The exit-code table is the one source: the Job manifests' podFailurePolicy, the README's table,
// the summary's meanings and a plan's ranking must agree with it. Expected lists are written out
// here by hand from the README's contract (DESIGN.md section 3), not derived from the table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  codesRetryCannotMend,
  EXIT_CODES,
  ExitCode,
  exitCodeMeaning,
  mostSevereExitCode,
} from '../../src/common/exit-codes.js';
import { repoRoot } from '../helpers.js';

/** 5 (transient) and 7 (busy) are the codes a later try can mend; 0 is no failure. */
const FAIL_JOB_AT_ONCE = [1, 2, 3, 4, 6, 10];

describe('the exit-code table', () => {
  it('has the documented codes and names', () => {
    expect(EXIT_CODES).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 10]);
    expect(ExitCode).toEqual({
      ok: 0,
      internal: 1,
      usage: 2,
      invalidInput: 3,
      helmFailed: 4,
      transient: 5,
      preflightFailed: 6,
      releaseBusy: 7,
      changesPlanned: 10,
    });
  });

  it('says which codes a retry cannot mend', () => {
    expect(codesRetryCannotMend()).toEqual(FAIL_JOB_AT_ONCE);
  });

  it.each([
    [[], 0],
    [[0, 0], 0],
    [[5, 4], 4],
    [[7, 5], 7],
    [[4, 6], 6],
    [[5, 3, 7], 3],
    [[2, 1], 1],
    [[42, 5], 5],
    [[42, 43], 42],
  ])('ranks %j: most severe %i', (codes, expected) => {
    expect(mostSevereExitCode(codes)).toBe(expected);
  });

  it('gives each code its meaning, and an unknown one "error"', () => {
    expect(exitCodeMeaning(4)).toBe('helm operation failed');
    expect(exitCodeMeaning(7)).toBe('release busy');
    expect(exitCodeMeaning(99)).toBe('error');
  });
});

describe.each(['manifests/installer.yaml', 'kots/installer-job.yaml'])('%s podFailurePolicy', (file) => {
  const docs = parseAllDocuments(readFileSync(join(repoRoot, file), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as { kind: string; spec?: any };
  });
  const rules = docs.find((d) => d.kind === 'Job')!.spec.podFailurePolicy.rules as {
    action: string;
    onExitCodes?: { operator: string; values: number[] };
  }[];

  it('fails the Job at once on exactly the codes a retry cannot mend', () => {
    const failJob = rules.find((r) => r.action === 'FailJob')!.onExitCodes!;
    expect(failJob.operator).toBe('In');
    expect([...failJob.values].sort((a, b) => a - b)).toEqual(codesRetryCannotMend());
  });
});

describe("README's exit-code table", () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Exit codes'),
    readme.indexOf('\n## ', readme.indexOf('## Exit codes') + 1),
  );
  const rows = section
    .split('\n')
    .filter((line) => /^\| \d+ \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map((cells) => ({ code: Number(cells[1]), retry: cells[3]! }));

  it('lists exactly the codes of the table, in order', () => {
    expect(rows.map((r) => r.code)).toEqual(EXIT_CODES);
  });

  it('says "yes" for retry on exactly the codes a retry can mend', () => {
    const yes = rows.filter((r) => r.retry.startsWith('yes')).map((r) => r.code);
    expect(yes).toEqual([5, 7]);
    const no = rows.filter((r) => r.retry.startsWith('no')).map((r) => r.code);
    expect(no).toEqual(codesRetryCannotMend().filter((c) => c !== ExitCode.changesPlanned));
  });
});
