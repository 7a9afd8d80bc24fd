// Runs one helm process with node's own child_process: output collected (bounded), an abort
// signal turned into SIGTERM (and, unless the caller asks for one, no SIGKILL after it: helm
// needs time to roll back; the pod's grace period is the real bound). node:child_process
// instead of execa because execa and its hundred modules cost a few hundred milliseconds of CPU
// on every run (issue 10), and this is all of it we used.
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface ProcessOptions {
  /** Added to our environment (helm needs PATH, HOME, KUBECONFIG, ...). */
  env?: Record<string, string>;
  input?: string;
  signal?: AbortSignal;
  /** Bytes kept per stream; beyond it the process is stopped and the run fails. */
  maxBuffer?: number;
  /** After an abort, SIGKILL if the process still runs this long after SIGTERM (calls safe to kill). */
  killAfterMs?: number;
  /** Called with each stream as it starts, e.g. to log its lines as they come. */
  onStreams?: (stdout: Readable, stderr: Readable) => void;
}

export interface ProcessResult {
  /** Undefined when the process did not start, or ended by a signal. */
  exitCode?: number;
  signal?: NodeJS.Signals;
  stdout: string;
  stderr: string;
  /** Stopped because the abort signal fired. */
  canceled: boolean;
  /** The process never started (ENOENT, EACCES, ...). */
  spawnError?: string;
  /** Output went past maxBuffer. */
  overflow?: boolean;
}

export function runProcess(file: string, args: string[], o: ProcessOptions = {}): Promise<ProcessResult> {
  const maxBuffer = o.maxBuffer ?? 512 * 1024 * 1024;
  return new Promise((resolve) => {
    let canceled = false;
    let overflow = false;
    let spawnError: string | undefined;
    const child = spawn(file, args, {
      env: { ...process.env, ...o.env },
      stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const collect = (stream: Readable) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBuffer) {
          if (!overflow) child.kill('SIGTERM');
          overflow = true;
          return;
        }
        chunks.push(chunk);
      });
      return () => Buffer.concat(chunks).toString('utf8');
    };
    const stdout = collect(child.stdout!);
    const stderr = collect(child.stderr!);
    o.onStreams?.(child.stdout!, child.stderr!);
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      canceled = true;
      child.kill('SIGTERM');
      if (o.killAfterMs !== undefined) killTimer = setTimeout(() => child.kill('SIGKILL'), o.killAfterMs);
    };
    if (o.signal?.aborted) onAbort();
    else o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.input !== undefined) {
      child.stdin?.on('error', () => {}); // helm may exit without reading all of it
      child.stdin?.end(o.input);
    }
    child.on('error', (err: NodeJS.ErrnoException) => {
      // Only a failure to start is reported here; the rest ends in 'close'.
      if (child.pid === undefined) spawnError = err.code ?? err.message;
    });
    child.on('close', (code, signal) => {
      o.signal?.removeEventListener('abort', onAbort);
      clearTimeout(killTimer);
      resolve({
        exitCode: spawnError === undefined && code !== null ? code : undefined,
        signal: signal ?? undefined,
        stdout: stdout(),
        stderr: stderr(),
        canceled,
        spawnError,
        overflow,
      });
    });
  });
}
