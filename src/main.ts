// The one place that ends the process: runs a command, turns any error into the failure
// summary (stderr, the log, and the termination file for install) and sets process.exitCode.
// Nothing calls process.exit, so buffered output is flushed before the process ends.
import { readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { installCommand } from './commands/install-command.js';
import { renderCommand } from './commands/render-command.js';
import { valuesCommand } from './commands/values-command.js';
import { imagesCommand } from './commands/images-command.js';
import { ExitCode } from './errors.js';
import { packageRoot } from './helm/helm-binary.js';
import { buildProgram } from './program.js';
import { failureSummary, toInstallerError, writeTerminationMessage } from './report.js';
import type { RunState } from './run-state.js';
import { SecretRegistry } from './secrets.js';

export async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    // Forwarded to helm (execa's cancelSignal) and awaited: helm marks the release failed or
    // rolls it back instead of leaving it pending.
    state.logger?.warn({ signal }, 'signal received: stopping helm cleanly');
    controller.abort();
  };
  const state: RunState = { signal: controller.signal, secrets: new SecretRegistry(), progress: { action: 'parsing options' } };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    const { program, exitCode } = buildProgram(
      {
        install: (o) => installCommand(o, state),
        values: (o) => valuesCommand(o, state),
        render: (o) => renderCommand(o, state),
        images: (o) => imagesCommand(o, state),
      },
      readVersion(),
      argv.slice(2),
    );
    await program.parseAsync(argv);
    return exitCode();
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version "fail" with exit code 0; everything else commander rejects is usage.
      return err.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    }
    const error = toInstallerError(err);
    const summary = failureSummary(error, state.progress, state.secrets);
    state.logger?.error({ exitCode: error.exitCode, action: state.progress.action, release: state.progress.release }, error.message.split('\n')[0]);
    if (state.terminationLog) writeTerminationMessage(state.terminationLog, summary);
    writeSync(2, `${summary}\n`);
    return error.exitCode;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

function readVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
