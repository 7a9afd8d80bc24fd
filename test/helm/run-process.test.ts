// The process runner under every helm call: output kept exactly, exit codes, a process that
// cannot start told apart from one that failed, the abort signal delivered as SIGTERM and the
// process's own clean-up awaited, input on stdin, and output bounded.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/helm/run-process.js';
import { helm4, tempDir } from '../helpers.js';

describe('runProcess', () => {
  it('keeps stdout and stderr exactly and reports the exit code', async () => {
    expect(await runProcess(helm4, ['version', '--short'])).toMatchObject({
      exitCode: 0,
      stdout: 'v4.1.4+g05fa379\n',
      stderr: '',
      canceled: false,
    });
    expect(await runProcess('sh', ['-c', 'printf "a\\n\\n"; echo oops >&2; exit 3'])).toMatchObject({
      exitCode: 3,
      stdout: 'a\n\n',
      stderr: 'oops\n',
    });
  });

  it('a binary that cannot start is a spawn error (ENOENT, EACCES), not an exit code', async () => {
    // A path under a fresh directory: a file someone left at /nonexistent made this ENOTDIR once.
    expect(await runProcess(join(tempDir('run-process'), 'missing', 'helm'), ['version'])).toMatchObject({
      exitCode: undefined,
      spawnError: 'ENOENT',
    });
    const notExecutable = join(tempDir('run-process'), 'helm');
    writeFileSync(notExecutable, '#!/bin/sh\n', { mode: 0o644 });
    expect(await runProcess(notExecutable, ['version'])).toMatchObject({ exitCode: undefined, spawnError: 'EACCES' });
  });

  it('abort sends SIGTERM and waits for the process to finish its clean-up', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const r = await runProcess(
      'sh',
      ['-c', 'trap "sleep 0.2; echo cleaned up; exit 9" TERM; echo started; while :; do sleep 0.05; done'],
      { signal: controller.signal },
    );
    expect(r).toMatchObject({ exitCode: 9, stdout: 'started\ncleaned up\n', canceled: true });
  });

  it('with killAfterMs, a process that goes on after SIGTERM is killed (a helm template keeps rendering)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    // Ignores SIGTERM and would run 30 s.
    const r = await runProcess(
      'sh',
      [
        '-c',
        'trap "echo term ignored" TERM; echo started; i=0; while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; echo finished',
      ],
      {
        signal: controller.signal,
        killAfterMs: 1000,
      },
    );
    expect(r).toMatchObject({
      exitCode: undefined,
      signal: 'SIGKILL',
      canceled: true,
      stdout: 'started\nterm ignored\n',
    });
    // Not a speed figure: well below the 30 s the process would have run.
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('passes input on stdin and the environment on top of ours', async () => {
    expect((await runProcess('cat', [], { input: 'x: 1\n' })).stdout).toBe('x: 1\n');
    const r = await runProcess('sh', ['-c', 'echo "$HELM_X $HOME"'], { env: { HELM_X: 'set' } });
    expect(r.stdout).toBe(`set ${process.env.HOME}\n`);
  });

  it('stops a process whose output passes the bound', async () => {
    const r = await runProcess('sh', ['-c', 'head -c 100000 /dev/zero; sleep 5'], { maxBuffer: 1000 });
    expect(r).toMatchObject({ overflow: true, signal: 'SIGTERM', exitCode: undefined });
  });
});
