// The Job manifests: the summary shown by kubectl describe, disrupted pods retried, the grace
// period. Their FailJob exit codes are checked against the exit-code table in
// test/common/exit-codes.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { durationMs } from '../../src/options/config.js';
import { repoRoot } from '../helpers.js';

/** README "Signals and the grace period": the rollback after SIGTERM may wait the whole timeout. */
const graceFor = (timeout: string): number => Math.ceil(durationMs(timeout) / 1000) + 60;

describe('manifests/installer.yaml', () => {
  const docs = parseAllDocuments(readFileSync(join(repoRoot, 'manifests', 'installer.yaml'), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as { kind: string; spec?: any };
  });
  const job = docs.find((d) => d.kind === 'Job')!;

  it('shows the summary in kubectl describe', () => {
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    expect(pod.containers[0].terminationMessagePolicy).toBe('FallbackToLogsOnError');
  });

  it('retries a disrupted (evicted, preempted) pod whatever its exit code, and an OOM-killed one (137)', () => {
    const rules = job.spec.podFailurePolicy.rules as {
      action: string;
      onExitCodes?: { values: number[] };
      onPodConditions?: { type: string }[];
    }[];
    // Rules apply in order, first match wins: the disruption rule must come before FailJob.
    expect(rules[0]).toEqual({ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] });
    expect(rules.some((r) => r.onExitCodes?.values.includes(137))).toBe(false);
    expect(job.spec.backoffLimit).toBeGreaterThanOrEqual(1);
  });
});

describe.each(['manifests/installer.yaml', 'kots/installer-job.yaml'])('%s grace period rule', (file) => {
  it('terminationGracePeriodSeconds >= HELM_INSTALLER_TIMEOUT + 60 s, so helm can finish the rollback a SIGTERM starts', () => {
    const docs = parseAllDocuments(readFileSync(join(repoRoot, file), 'utf8')).map(
      (d) => d.toJS() as { kind: string; spec?: any },
    );
    const pod = docs.find((d) => d.kind === 'Job')!.spec.template.spec;
    const env = pod.containers[0].env as { name: string; value: string }[];
    const timeout = env.find((e) => e.name === 'HELM_INSTALLER_TIMEOUT')?.value;
    // The timeout is set explicitly, so the rule can be checked (and a reader sees both together).
    expect(timeout).toBeDefined();
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(graceFor(timeout!));
  });
});

describe('the grace period rule itself', () => {
  it('is the timeout plus 60 s', () => {
    expect(graceFor('10m')).toBe(660);
    expect(graceFor('90s')).toBe(150);
    expect(graceFor('1h30m')).toBe(5460);
  });
});
