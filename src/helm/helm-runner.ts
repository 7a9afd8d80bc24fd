// The one place that starts helm. Output is streamed line by line into the logger (tagged, so a
// log reader can tell helm's words from ours), kept for classification, and a cancel signal
// (SIGTERM/SIGINT to us) is forwarded to helm and awaited: helm then marks the release failed
// or rolls it back instead of leaving it pending.
import { createInterface } from 'node:readline';
import { execa } from 'execa';
import type { Logger } from '../logger.js';
import type { HelmBinary } from './helm-binary.js';

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
  | { ok: false; exitCode: number; stdout: string; stderr: string; canceled: boolean; spawnError?: string };

export class HelmRunner {
  constructor(
    readonly binary: HelmBinary,
    private readonly logger: Logger,
  ) {}

  async run(call: HelmCall): Promise<HelmOutcome> {
    const log = this.logger.child({ helm: call.args[0] });
    log.debug({ argv: call.displayArgs ?? call.args }, 'running helm');
    const child = execa(this.binary.path, call.args, {
      reject: false,
      env: call.env,
      input: call.input,
      cancelSignal: call.signal,
      // Helm needs time to roll back after SIGTERM; the pod's grace period is the real bound.
      forceKillAfterDelay: false,
      maxBuffer: 512 * 1024 * 1024,
      stripFinalNewline: false,
    });
    if (call.stream) {
      for (const [stream, level] of [
        [child.stdout, 'info'],
        [child.stderr, 'warn'],
      ] as const) {
        if (!stream) continue;
        createInterface({ input: stream }).on('line', (line) => {
          if (line.trim()) log[level]({ stream: level === 'info' ? 'stdout' : 'stderr' }, line);
        });
      }
    }
    const result = await child;
    const stdout = String(result.stdout ?? '');
    const stderr = String(result.stderr ?? '');
    if (!result.failed) return { ok: true, stdout, stderr };
    return {
      ok: false,
      exitCode: result.exitCode ?? -1,
      stdout,
      stderr,
      canceled: result.isCanceled,
      spawnError: result.exitCode === undefined ? (result.code ?? result.shortMessage) : undefined,
    };
  }
}
