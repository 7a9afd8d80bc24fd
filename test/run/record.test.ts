import { describe, expect, it } from 'vitest';
import { HelmOperationError, UsageError } from '../../src/common/errors.js';
import type { RunState } from '../../src/run/run-state.js';
import { SecretRegistry } from '../../src/common/secrets.js';
import { recordFailure, recordOutcome } from '../../src/run/record.js';

function state(): RunState {
  const secrets = new SecretRegistry();
  secrets.add('hunter2-password');
  return { signal: new AbortController().signal, secrets, progress: { action: 'x' }, outcomes: [] };
}

describe('outcomes', () => {
  it('are kept masked, typed Warning for failures and drift, Normal otherwise', () => {
    const s = state();
    const facts = { release: 'shop', namespace: 'prod', started: Date.now(), note: 'n' };
    for (const reason of [
      'Installed',
      'Upgraded',
      'Unchanged',
      'Recovered',
      'Suspended',
      'DriftCorrected',
      'DriftFound',
      'TestFailed',
    ] as const)
      recordOutcome(s, { ...facts, reason });
    expect(s.outcomes!.map((o) => `${o.reason}:${o.type}`)).toEqual([
      'Installed:Normal',
      'Upgraded:Normal',
      'Unchanged:Normal',
      'Recovered:Normal',
      'Suspended:Normal',
      'DriftCorrected:Warning',
      'DriftFound:Warning',
      'TestFailed:Warning',
    ]);
    const o = recordOutcome(s, {
      ...facts,
      reason: 'Upgraded',
      note: 'set password=hunter2-password',
      cause: 'hunter2-password leaked',
      revision: 3,
      chartVersion: '1.2.3',
    });
    expect(o).toEqual({
      reason: 'Upgraded',
      type: 'Normal',
      release: 'shop',
      namespace: 'prod',
      note: 'set password=[REDACTED]',
      cause: '[REDACTED] leaked',
      revision: 3,
      chartVersion: '1.2.3',
      durationSeconds: 0,
      exitCode: 0,
    });
  });

  it('a failure is recorded once, with its exit code and first line, once release and namespace are known; a usage error never', () => {
    const s = state();
    const progress = { action: 'waiting for helm', release: 'shop', namespace: 'prod', chartVersion: '1.0.0' };
    recordFailure(s, new UsageError('bad flag'), progress, Date.now());
    recordFailure(
      s,
      new HelmOperationError('UPGRADE FAILED: hunter2-password\nmore'),
      { action: 'reading values' },
      Date.now(),
    );
    expect(s.outcomes).toEqual([]);
    recordFailure(
      s,
      new HelmOperationError('UPGRADE FAILED: timed out with hunter2-password\nmore'),
      progress,
      Date.now(),
    );
    recordFailure(s, new HelmOperationError('again'), progress, Date.now());
    expect(s.outcomes).toEqual([
      {
        reason: 'Failed',
        type: 'Warning',
        release: 'shop',
        namespace: 'prod',
        chartVersion: '1.0.0',
        durationSeconds: 0,
        exitCode: 4,
        note: 'failed (exit 4) while waiting for helm: UPGRADE FAILED: timed out with [REDACTED]',
        cause: 'UPGRADE FAILED: timed out with [REDACTED]',
      },
    ]);
  });
});
