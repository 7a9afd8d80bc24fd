// Stage "config": the typed options every command runs on, and the validators that turn flag or
// environment strings into them. Every option has an environment variable because a Job sets
// env, not argv; the CLI (program.ts) only wires names to these.
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { UsageError } from './errors.js';
import type { SetArgument } from './helm/helm-args.js';
import type { LogFormat } from './logger.js';

export interface CommonOptions {
  chart?: string;
  appDir: string;
  baseValues: string[];
  values: string[];
  sets: SetArgument[];
  release?: string;
  namespace?: string;
  registry?: string;
  imagePullSecret?: string;
  /** Extra image locations in custom resources: `Kind:path` (see README). */
  imagePaths: string[];
  helmBin?: string;
  logFormat: LogFormat;
  logLevel: string;
}

export type TakeOwnership = 'first-install' | 'always' | 'never';

export interface InstallOptions extends CommonOptions {
  timeout: string;
  historyMax: number;
  dryRun: boolean;
  terminationLog: string;
  takeOwnership: TakeOwnership;
  skipPreflight: boolean;
  registryCaFile?: string;
  pullSecretFile?: string;
  /** Passed to helm verbatim (after `--`). */
  helmArgs: string[];
}

/** Go duration syntax, which is what helm's --timeout parses (`90s`, `5m`, `1h30m`). */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

export function parseTimeout(value: string): string {
  if (!GO_DURATION.test(value.trim())) {
    throw new UsageError(`invalid --timeout "${value}": expected a duration such as 300s, 10m or 1h30m`, {
      key: 'timeout',
      hint: 'Set --timeout / HELM_INSTALLER_TIMEOUT to a number with a unit (s, m, h).',
    });
  }
  return value.trim();
}

export function parseHistoryMax(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new UsageError(`invalid --history-max "${value}": expected a whole number >= 0 (0 keeps every revision)`, {
      key: 'history-max',
    });
  }
  return n;
}

export function parseLogFormat(value: string): LogFormat {
  if (value !== 'json' && value !== 'pretty') {
    throw new UsageError(`invalid --log-format "${value}": expected json or pretty`, { key: 'log-format' });
  }
  return value;
}

export function parseTakeOwnership(value: string): TakeOwnership {
  if (value !== 'first-install' && value !== 'always' && value !== 'never') {
    throw new UsageError(`invalid --take-ownership "${value}": expected first-install, always or never`, { key: 'take-ownership' });
  }
  return value;
}

export function parseReleaseName(value: string): string {
  // Helm's rule: DNS-1123 label-ish, at most 53 characters.
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(value) || value.length > 53) {
    throw new UsageError(`invalid release name "${value}": lowercase letters, digits and '-', at most 53 characters`, {
      key: 'release',
    });
  }
  return value;
}

/**
 * Repeatable list options. From the environment a list is one string: paths are separated like
 * PATH/KUBECONFIG (`:`); --set expressions by newlines (a single one may hold commas, as in helm).
 */
export function splitPathList(value: string): string[] {
  return value.split(delimiter).map((s) => s.trim()).filter(Boolean);
}

export function splitLines(value: string): string[] {
  return value.split('\n').map((s) => s.trim()).filter(Boolean);
}

/** Anything after `--`, or HELM_INSTALLER_HELM_ARGS split on white space. */
export function splitWords(value: string): string[] {
  return value.split(/\s+/).filter(Boolean);
}

export function defaultBaseValues(appDir: string): string[] {
  const dir = join(appDir, 'values');
  return existsSync(dir) ? [dir] : [];
}
