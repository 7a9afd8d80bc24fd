// Parsers of the drift options. A rule that cannot be read is a usage error (exit 2) naming the
// flag and its environment variable (and, for the file, the file and line), before any work.
import { oneOf, parsePath } from '../options/config.js';
import { parseIgnoreRules, type IgnoreRule } from '../drift/ignore-rules.js';
import { InstallerError, OptionValueError } from '../common/errors.js';
import { MiB, readInputFile } from '../common/read-input.js';
import type { DriftMode } from './decide.js';

export const parseDriftMode = oneOf<DriftMode>('correct', 'warn', 'off');

export function parseDriftIgnore(raw: string): IgnoreRule[] {
  return asOptionError(() => parseIgnoreRules(raw, { option: '--drift-ignore', env: 'HELM_INSTALLER_DRIFT_IGNORE' }));
}

export function parseDriftIgnoreFile(raw: string): IgnoreRule[] {
  const file = parsePath(raw);
  return asOptionError(() => {
    const text = readInputFile(file, { what: 'drift ignore file', maxBytes: MiB, hint: '' });
    return parseIgnoreRules(text, { option: '--drift-ignore-file', env: 'HELM_INSTALLER_DRIFT_IGNORE_FILE', file });
  });
}

/** The resolver names the flag and the env var: the rule parser's own text says what is wrong. */
function asOptionError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    // The resolver names the option and its variable itself: not twice.
    if (error instanceof InstallerError || error instanceof Error)
      throw new OptionValueError(error.message.replace(/^--[a-z-]+ \([A-Z_]+\): /, ''));
    throw error;
  }
}
