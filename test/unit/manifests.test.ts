// The Job manifest's podFailurePolicy must agree with the exit-code table: codes a retry cannot
// fix fail the Job at once, the others (transient, busy) are retried.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ExitCode } from '../../src/errors.js';
import { EXIT_CODE_MEANING } from '../../src/report.js';
import { repoRoot } from '../helpers.js';

const retryable: number[] = [ExitCode.transient, ExitCode.releaseBusy];

describe('manifests/installer.yaml', () => {
  const docs = parseAllDocuments(readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as { kind: string; spec?: any };
  });
  const job = docs.find((d) => d.kind === 'Job')!;

  it('fails the Job at once on every non-retryable exit code, and on no retryable one', () => {
    const failJob = job.spec.podFailurePolicy.rules.find((r: { action: string }) => r.action === 'FailJob').onExitCodes.values as number[];
    const nonZero = Object.values(ExitCode).filter((c) => c !== 0);
    expect([...failJob].sort()).toEqual(nonZero.filter((c) => !retryable.includes(c)).sort());
    for (const c of retryable) expect(failJob).not.toContain(c);
  });

  it('shows the summary in kubectl describe and lets helm roll back on SIGTERM', () => {
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.containers[0].terminationMessagePolicy).toBe('FallbackToLogsOnError');
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
  });

  it('the README documents every exit code', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    for (const code of Object.values(ExitCode)) {
      expect(readme).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
      expect(EXIT_CODE_MEANING[code]).toBeTruthy();
    }
  });
});
