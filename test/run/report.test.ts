import { describe, expect, it } from 'vitest';
import { HelmOperationError, InvalidInputError } from '../../src/common/errors.js';
import { failureSummary, SUMMARY_MAX_BYTES, SUMMARY_MAX_LINES } from '../../src/run/report.js';
import { SecretRegistry } from '../../src/common/secrets.js';

describe('failureSummary', () => {
  it('names release, action, cause, place and next step', () => {
    const err = new InvalidInputError('values.yaml:3: invalid YAML', { file: 'values.yaml', line: 3, hint: 'Fix it.' });
    const text = failureSummary(
      err,
      { release: 'shop', namespace: 'prod', action: 'reading values' },
      new SecretRegistry(),
    );
    expect(text.split('\n')).toEqual([
      'helm-installer FAILED (exit 3: invalid input)',
      'release: shop  namespace: prod  action: reading values',
      'cause: values.yaml:3: invalid YAML',
      'next: Fix it.',
    ]);
  });

  it('stays within the kubelet limits and keeps the next step when helm says a lot', () => {
    const details = Array.from(
      { length: 500 },
      (_, i) => `  resource Deployment/ns/web-${i} not ready. status: InProgress ${'x'.repeat(80)}`,
    );
    const err = new HelmOperationError(['UPGRADE FAILED: timed out', ...details].join('\n'), {
      hint: 'Look at the resources.',
    });
    const text = failureSummary(err, { release: 'shop', action: 'upgrade' }, new SecretRegistry());
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
    expect(text.split('\n').length).toBeLessThanOrEqual(SUMMARY_MAX_LINES);
    expect(text).toContain('cause: UPGRADE FAILED: timed out');
    expect(text.split('\n').at(-1)).toBe('next: Look at the resources.');
    expect(text).toContain('more in the log above');
  });

  it('masks known secrets', () => {
    const secrets = new SecretRegistry();
    secrets.collectFrom({ database: { password: 'hunter2-very-secret' } });
    const err = new HelmOperationError('failed: password hunter2-very-secret rejected');
    expect(failureSummary(err, { action: 'install' }, secrets)).not.toContain('hunter2-very-secret');
  });

  it('turns an unexpected error into exit 1', () => {
    expect(failureSummary(new TypeError('x is undefined'), { action: 'install' }, new SecretRegistry())).toMatch(
      /^helm-installer FAILED \(exit 1: internal error\)/,
    );
  });
});
