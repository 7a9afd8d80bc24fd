// Typed errors that carry the exit code they map to. Only src/cli/main.ts turns one into an exit
// code; every stage throws these so that the cause, the place and the next step travel together.
import { ExitCode } from './exit-codes.js';

export interface ErrorDetails {
  /** What to do next, in one sentence an admin can act on. */
  hint?: string;
  /** Where: a file path, optionally with key and line. */
  file?: string;
  key?: string;
  line?: number;
  cause?: unknown;
}

export class InstallerError extends Error {
  readonly exitCode: ExitCode;
  readonly hint?: string;
  readonly file?: string;
  readonly key?: string;
  readonly line?: number;

  constructor(exitCode: ExitCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.hint = details.hint;
    this.file = details.file;
    this.key = details.key;
    this.line = details.line;
  }

  /** "file:line key" when known, for messages and summaries. */
  get where(): string | undefined {
    if (!this.file) return this.key;
    const at = this.line ? `${this.file}:${this.line}` : this.file;
    return this.key ? `${at} (key ${this.key})` : at;
  }
}

/** A flag or environment variable is wrong: fix the command line or the Job's env. */
export class UsageError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.usage, message, details);
  }
}

/** Values, chart or config content is wrong: fix the file named. */
export class InvalidInputError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.invalidInput, message, details);
  }
}

/** Helm ran and the operation failed (release rolled back where it could be). */
export class HelmOperationError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.helmFailed, message, details);
  }
}

/** The cluster could not be reached, or another failure a retry may fix. */
export class TransientError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.transient, message, details);
  }
}

/** A check before install failed: images missing from the registry, permissions. */
export class PreflightError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.preflightFailed, message, details);
  }
}

/** Another helm operation holds the release. */
export class ReleaseBusyError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.releaseBusy, message, details);
  }
}

/** The helm binary could not be started at all (not a helm failure). */
export class HelmNotFoundError extends InstallerError {
  constructor(message: string, details?: ErrorDetails) {
    super(ExitCode.internal, message, details);
  }
}

/**
 * Thrown by option parsers: the text says what was expected ("expected a whole number >= 0");
 * the option resolver turns it into a UsageError naming the flag and its environment variable.
 */
export class OptionValueError extends Error {}
