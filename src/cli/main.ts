// The one place that ends the process: runs a command, turns any error into the failure
// summary (stderr, the log, and the termination file for install) and sets process.exitCode.
// Nothing else calls process.exit, so buffered output is flushed before the process ends; the
// exceptions are a second signal, the admin's way to force an exit, and an error that escaped
// every await (logs are synchronous, so nothing is lost either way).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommanderError } from 'commander';
import { loadCommands } from './commands/catalog.js';
import { TransientError, UsageError, type InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import { packageRoot } from '../common/package-root.js';
import { buildProgram } from './program.js';
import { failureSummary, terminationLogPath, toInstallerError, writeSummary } from '../run/report.js';
import type { RunState } from '../run/run-state.js';
import { SecretRegistry } from '../common/secrets.js';
import { recordFailure } from '../run/record.js';

export async function main(argv: string[]): Promise<number> {
  const started = Date.now();
  const controller = new AbortController();
  const state: RunState = {
    signal: controller.signal,
    secrets: new SecretRegistry(),
    progress: { action: 'parsing options' },
    // Known before the options are parsed, so that a bad option leaves a termination message too.
    terminationLog: terminationLogPath(argv.slice(2), process.env),
    outcomes: [],
  };
  const onSignal = signalHandler(state, controller);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // An exception thrown in a callback or a promise rejected with no one awaiting it escapes the
  // try below: it still ends here, with the summary and the termination message (exit 1, or the
  // code of the typed error). The state may be broken, so the process ends at once.
  process.on('uncaughtException', (err, origin) => {
    const error = toInstallerError(err);
    const what = origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception';
    state.logger?.error(
      {
        exitCode: error.exitCode,
        action: state.progress.action,
        origin,
        stack: err instanceof Error ? err.stack : undefined,
      },
      `${what}: ${error.message.split('\n')[0]}`,
    );
    exitNow(state, error);
  });
  try {
    // Only the command argv names is loaded (see commands/catalog.ts): startup stays light.
    const commands = await loadCommands(argv.slice(2));
    const { program, exitCode } = buildProgram(commands, readVersion(), argv.slice(2), state);
    await program.parseAsync(argv);
    await state.tell?.(state.outcomes!);
    return exitCode();
  } catch (err) {
    // --help and --version "fail" with exit code 0.
    if (err instanceof CommanderError && err.exitCode === 0) return ExitCode.ok;
    const error = toInstallerError(err instanceof CommanderError ? commanderUsageError(err, argv) : err);
    const summary = failureSummary(error, state.progress, state.secrets);
    state.logger?.error(
      { exitCode: error.exitCode, action: state.progress.action, release: state.progress.release },
      error.message.split('\n')[0],
    );
    writeSummary(state.terminationLog, { summary, terminationMessage: summary });
    recordFailure(state, error, state.progress, started);
    await state.tell?.(state.outcomes!);
    return error.exitCode;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/**
 * The first SIGTERM/SIGINT is forwarded to helm (execa's cancelSignal) and awaited: helm marks
 * the release failed or rolls it back instead of leaving it pending; between stages the run stops
 * at the next. A second one is the admin wanting out now: whatever helm was doing may be left
 * pending; the release Lease expires on its own and the next run recovers the release.
 */
function signalHandler(state: RunState, controller: AbortController): (signal: NodeJS.Signals) => void {
  let signals = 0;
  return (signal) => {
    signals += 1;
    if (signals === 1) {
      state.logger?.warn(
        { signal, action: state.progress.action },
        'signal received: stopping cleanly (a second signal forces exit)',
      );
      controller.abort();
      return;
    }
    state.logger?.error({ signal, action: state.progress.action }, 'second signal: exiting now');
    exitNow(
      state,
      new TransientError(
        `forced exit on a second ${signal} during ${state.progress.action}; an operation in flight may be left pending`,
        {
          hint: 'Run the installer again: it recovers a release left pending once the Lease of this run has expired.',
        },
      ),
    );
  };
}

/** The two ways out that cannot wait for the command: its summary and termination message, then exit. */
function exitNow(state: RunState, error: InstallerError): never {
  const summary = failureSummary(error, state.progress, state.secrets);
  writeSummary(state.terminationLog, { summary, terminationMessage: summary });
  process.exit(error.exitCode);
}

/** Commander's complaint (unknown option, missing value, unknown command) as a usage error. */
function commanderUsageError(err: CommanderError, argv: string[]): UsageError {
  const command = argv.slice(2).find((a) => !a.startsWith('-'));
  const message =
    err.code === 'commander.help' || err.code === 'commander.helpDisplayed'
      ? 'no command given'
      : err.message.replace(/^error: /, '');
  return new UsageError(message, {
    hint: `Run \`helm-installer ${command && !message.startsWith('unknown command') ? `${command} ` : ''}--help\` for the commands and options (each option also has an environment variable).`,
  });
}

function readVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
