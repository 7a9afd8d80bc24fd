// `troubleshoot-specs --check` in the vendor's CI: the shipped kots/troubleshoot.yaml is what the
// bundled app renders now, and a stale copy fails (exit 6) naming the line that differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, tempDir } from '../helpers.js';

const shipped = join(repoRoot, 'kots', 'troubleshoot.yaml');

describe('troubleshoot-specs', () => {
  it('prints the shipped kots/troubleshoot.yaml, and --check passes on it', async () => {
    const printed = await runCli(['troubleshoot-specs']);
    expect(printed.exitCode, printed.stderr).toBe(0);
    expect(`${printed.stdout}\n`).toBe(readFileSync(shipped, 'utf8')); // execa strips the last newline
    const check = await runCli(['troubleshoot-specs', '--check', shipped]);
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout).toBe(`${shipped}: the Troubleshoot specs are up to date`);
  });

  it('--check fails (exit 6) on a stale file, naming the first line that differs and how to regenerate it', async () => {
    const lines = readFileSync(shipped, 'utf8').split('\n');
    // The storefront chart as it was before it required Kubernetes 1.27.
    const at = lines.indexOf(
      '              when: ">=1.27.0"',
      lines.findIndex((l) => l.includes('checkName: Kubernetes version for storefront')),
    );
    expect(at).toBeGreaterThan(0);
    lines[at] = '              when: ">=1.25.0"';
    const stale = join(tempDir('troubleshoot-specs'), 'troubleshoot.yaml');
    writeFileSync(stale, lines.join('\n'));
    const r = await runCli(['troubleshoot-specs', '--check', stale]);
    expect(r.exitCode).toBe(6);
    expect(r.stderr).toContain(`${stale} is not what the app renders now (line ${at + 1}):`);
    expect(r.stderr).toContain('  committed:               when: ">=1.25.0"');
    expect(r.stderr).toContain('  now:                     when: ">=1.27.0"');
    expect(r.stderr).toContain(`next: Regenerate it: helm-installer troubleshoot-specs > ${stale}, and commit it.`);
  });
});
