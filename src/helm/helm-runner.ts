// The one place that starts helm. Output is streamed line by line into the logger (tagged, so a
// log reader can tell helm's words from ours), kept for classification, and a cancel signal
// (SIGTERM/SIGINT to us) is forwarded to helm and awaited: helm then marks the release failed
// or rolls it back instead of leaving it pending.
import { createInterface } from 'node:readline';
import type { Logger } from 'pino';
import type { HelmBinary } from './helm-binary.js';
import { runProcess } from './run-process.js';

export interface HelmCall {
  args: string[];
  env?: Record<string, string>;
  /** How argv appears in logs (secret --set values masked). Defaults to args. */
  displayArgs?: string[];
  /** Log each output line (install/upgrade) or keep quiet (JSON queries). */
  stream?: boolean;
  signal?: AbortSignal;
  input?: string;
}

export type HelmOutcome =
  | { ok: true; stdout: string; stderr: string }
  | {
      ok: false;
      exitCode: number;
      stdout: string;
      stderr: string;
      canceled: boolean;
      spawnError?: string;
      killedBy?: NodeJS.Signals;
    };

/** Helm commands that write release records or cluster objects. */
const CHANGES_RELEASE = new Set(['upgrade', 'install', 'rollback', 'uninstall']);

export class HelmRunner {
  constructor(
    readonly binary: HelmBinary,
    private readonly logger: Logger,
  ) {}

  async run(call: HelmCall): Promise<HelmOutcome> {
    const log = this.logger.child({ helm: call.args[0] });
    log.debug({ argv: call.displayArgs ?? call.args }, 'running helm');
    const started = Date.now();
    const result = await runProcess(this.binary.path, call.args, {
      env: call.env,
      input: call.input,
      signal: call.signal,
      // Helm 4 catches SIGTERM but a `template` goes on rendering to the end (a minute, for a
      // heavy chart): a call that changes nothing in the cluster is killed at once when canceled.
      // Calls that change the release only get SIGTERM, so helm can mark it failed or roll back.
      killAfterMs: CHANGES_RELEASE.has(call.args[0] ?? '') ? undefined : 0,
      maxBuffer: 512 * 1024 * 1024,
      onStreams: call.stream
        ? (stdout, stderr) => {
            for (const [stream, level] of [
              [stdout, 'info'],
              [stderr, 'warn'],
            ] as const) {
              createInterface({ input: stream }).on('line', (line) => {
                if (line.trim()) log[level]({ stream: level === 'info' ? 'stdout' : 'stderr' }, line);
              });
            }
          }
        : undefined,
    });
    const { stdout, stderr } = result;
    // With its start above: where a run's time goes (the bench's breakdown reads both).
    log.debug({ exitCode: result.exitCode, seconds: (Date.now() - started) / 1000 }, 'helm ended');
    // Helm 4 catches SIGTERM, and a `template` it was rendering then still ends with exit 0: a
    // call whose cancel signal fired is interrupted, whatever helm's exit code.
    if (result.exitCode === 0 && !result.overflow && !result.canceled) return { ok: true, stdout, stderr };
    return {
      ok: false,
      exitCode: result.exitCode ?? -1,
      stdout,
      stderr: result.overflow ? `${stderr}\nError: helm printed more than 512 MiB` : stderr,
      canceled: result.canceled,
      spawnError: result.spawnError,
      killedBy: result.signal,
    };
  }
}
