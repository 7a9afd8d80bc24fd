// Options typed once. Each command declares a table of options (flag, environment variable,
// parser, default) beside its handler; the CLI registers the flags from that table, and one
// resolver turns flag values and environment strings into the typed options object with the
// SAME parsers. A bad value is a usage error naming the flag and the env var, and where it came
// from; every error is collected before any work starts.
import { OptionValueError, UsageError } from '../common/errors.js';
import type { SecretRegistry } from '../common/secrets.js';

const ENV_PREFIX = 'HELM_INSTALLER_';

/** What a parser may use: secrets found in a value are registered before anything is printed. */
export interface ParseContext {
  secrets: SecretRegistry;
}

export type Parser<T> = (raw: string, ctx: ParseContext) => T;

interface BaseSpec {
  /** Commander syntax: '-f, --values <path>' or '--dry-run'. */
  flags: string;
  /** The full environment variable name. */
  env: string;
  description: string;
  /** Shown in --help and in error echoes: `mask` hides the value (secrets may sit in it). */
  echo?: (raw: string, ctx: ParseContext) => string;
}

/** A single value; the last flag wins. */
export interface ValueSpec<T, O> extends BaseSpec {
  kind: 'value';
  parse: Parser<T>;
  fallback: () => O;
  defaultText?: string;
}

/** A boolean: the flag alone is true; the env var is parsed by parseBoolean. */
export interface SwitchSpec extends BaseSpec {
  kind: 'switch';
}

/** Repeatable; from the environment a list is one string, split by `split`. */
export interface ListSpec<T, O> extends BaseSpec {
  kind: 'list';
  split: (raw: string) => string[];
  parse: Parser<T>;
  fallback: () => O;
  /** Bound on the number of items (hostile input stays bounded). */
  max: number;
}

/** Arguments after `--`, or the env var split on white space. */
export interface RestSpec extends BaseSpec {
  kind: 'rest';
  /** Checks and normalises the arguments (throws OptionValueError); verbatim without one. */
  parse?: (args: string[]) => string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type OptionSpec = ValueSpec<any, any> | SwitchSpec | ListSpec<any, any> | RestSpec;
export type OptionTable = Record<string, OptionSpec>;

export type OptionsOf<S extends OptionTable> = {
  [K in keyof S]: S[K] extends ValueSpec<infer T, infer O>
    ? T | O
    : S[K] extends ListSpec<infer T, infer O>
      ? T[] | O
      : S[K] extends SwitchSpec
        ? boolean
        : string[];
};

const env = (name: string) => ENV_PREFIX + name;

export function value<T>(
  flags: string,
  envName: string,
  description: string,
  parse: Parser<T>,
): ValueSpec<T, undefined>;
export function value<T>(
  flags: string,
  envName: string,
  description: string,
  parse: Parser<T>,
  fallback: T,
  defaultText?: string,
): ValueSpec<T, T>;
export function value<T>(
  flags: string,
  envName: string,
  description: string,
  parse: Parser<T>,
  fallback?: T,
  defaultText?: string,
): ValueSpec<T, T | undefined> {
  return {
    kind: 'value',
    flags,
    env: env(envName),
    description,
    parse,
    fallback: () => fallback,
    defaultText: defaultText ?? (fallback === undefined ? undefined : String(fallback)),
  };
}

export function switchOption(flags: string, envName: string, description: string): SwitchSpec {
  return { kind: 'switch', flags, env: env(envName), description };
}

export function list<T>(
  flags: string,
  envName: string,
  description: string,
  o: { split: (raw: string) => string[]; parse: Parser<T>; max?: number; echo?: BaseSpec['echo'] },
): ListSpec<T, T[]> {
  return {
    kind: 'list',
    flags,
    env: env(envName),
    description,
    split: o.split,
    parse: o.parse,
    fallback: () => [],
    max: o.max ?? 1000,
    echo: o.echo,
  };
}

/** A list whose absence differs from empty (a default computed later from other options). */
export function optionalList<T>(
  flags: string,
  envName: string,
  description: string,
  o: { split: (raw: string) => string[]; parse: Parser<T>; max?: number },
): ListSpec<T, undefined> {
  return {
    kind: 'list',
    flags,
    env: env(envName),
    description,
    split: o.split,
    parse: o.parse,
    fallback: () => undefined,
    max: o.max ?? 1000,
  };
}

export function rest(envName: string, description: string, parse?: (args: string[]) => string[]): RestSpec {
  return { kind: 'rest', flags: '', env: env(envName), description, ...(parse ? { parse } : {}) };
}

/** Builds the flag name shown in messages: the long form of `flags`. */
function longFlag(spec: OptionSpec): string {
  return /--[a-z0-9-]+/.exec(spec.flags)?.[0] ?? '--';
}

const TRUE = new Set(['true', '1', 'yes', 'on']);
const FALSE = new Set(['false', '0', 'no', 'off', '']);

/** The env form of a switch: false/0/no/off/empty is off, true/1/yes/on is on, anything else is an error. */
export function parseBoolean(raw: string): boolean {
  const v = raw.trim().toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new OptionValueError('expected true or false (also accepted: 1/0, yes/no, on/off; empty is false)');
}

/** What commander collected for one option: a string, a list of strings, or true for a switch. */
export type GivenValue = string | string[] | boolean | undefined;

export interface ResolveInput {
  /** By option key: what came from argv (undefined when the flag was not given). */
  given: Record<string, GivenValue>;
  env: NodeJS.ProcessEnv;
  ctx: ParseContext;
}

/**
 * Flag, else environment variable, else default; every value through the option's parser.
 * All problems are gathered into one usage error, so a Job's env is fixed in one round.
 */
export function resolveOptions<S extends OptionTable>(table: S, input: ResolveInput): OptionsOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of Object.keys(table)) out[key] = resolveOne(table[key]!, input.given[key], input, problems);
  if (problems.length > 0) {
    throw new UsageError(problems.join('\n'), {
      hint: 'Fix the flag on the command line, or the environment variable in the Job (`helm-installer <command> --help` lists both).',
    });
  }
  return out as OptionsOf<S>;
}

/** Where one option's value may come from, and where its problems go. */
interface Reading {
  given: GivenValue;
  envRaw: string | undefined;
  /** The env var counts as given: an empty one does only for a switch. */
  fromEnv: boolean;
  flag: string;
  ctx: ParseContext;
  problems: string[];
  /** The parsed value, or undefined with the problem (naming the flag or env var) recorded. */
  attempt: <T>(raw: string, source: 'flag' | 'env', parse: () => T) => T | undefined;
}

/** One option: its flag, else its env var, else its default. */
function resolveOne(spec: OptionSpec, given: GivenValue, input: ResolveInput, problems: string[]): unknown {
  const envRaw = input.env[spec.env];
  // An empty env value is "not set" for values and lists: KOTS renders an unset config item as "".
  const fromEnv = envRaw !== undefined && (spec.kind === 'switch' || envRaw.trim() !== '');
  const flag = longFlag(spec);
  const name = (raw: string, source: 'flag' | 'env') => {
    const shown = echo(spec, raw, input.ctx);
    return source === 'env'
      ? `invalid ${spec.env}=${shown} (env for ${flag})`
      : `invalid ${flag} ${shown} (or env ${spec.env})`;
  };
  const attempt = <T>(raw: string, source: 'flag' | 'env', parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (err) {
      problems.push(`${name(raw, source)}: ${reason(err)}`);
      return undefined;
    }
  };
  const reading: Reading = { given, envRaw, fromEnv, flag, ctx: input.ctx, problems, attempt };
  switch (spec.kind) {
    case 'switch':
      return given === true ? true : fromEnv ? attempt(envRaw!, 'env', () => parseBoolean(envRaw!)) : false;
    case 'value': {
      const raw = typeof given === 'string' ? given : fromEnv ? envRaw! : undefined;
      const source = typeof given === 'string' ? 'flag' : 'env';
      return raw === undefined ? spec.fallback() : attempt(raw, source, () => spec.parse(raw, input.ctx));
    }
    case 'list':
      return resolveList(spec, reading);
    case 'rest':
      return resolveRest(spec, reading);
  }
}

/** A list: the flag's values, else the env var's one string, split; each item parsed, their number bounded. */
function resolveList(spec: Extract<OptionSpec, { kind: 'list' }>, r: Reading): unknown {
  const { given, envRaw, fromEnv, flag } = r;
  const raws = Array.isArray(given) && given.length > 0 ? given : fromEnv ? [envRaw!] : undefined;
  const source = Array.isArray(given) && given.length > 0 ? 'flag' : 'env';
  if (raws === undefined) return spec.fallback();
  const items = raws.flatMap((raw) => spec.split(raw));
  if (items.length > spec.max) {
    r.problems.push(
      `${source === 'env' ? `${spec.env} (env for ${flag})` : `${flag} (or env ${spec.env})`} has ${items.length} items; at most ${spec.max} are accepted`,
    );
    return [];
  }
  return items.map((item) => r.attempt(item, source, () => spec.parse(item, r.ctx)));
}

/** Helm's own arguments: those after --, else the env var split on white space; checked whole. */
function resolveRest(spec: RestSpec, r: Reading): string[] {
  const { given, envRaw, fromEnv } = r;
  const fromArgv = Array.isArray(given) && given.length > 0;
  const args = fromArgv ? given : fromEnv ? splitWords(envRaw!) : [];
  try {
    return spec.parse ? spec.parse(args) : args;
  } catch (err) {
    r.problems.push(
      `${fromArgv ? `invalid helm arguments after -- (or env ${spec.env})` : `invalid ${spec.env}=${echo(spec, envRaw!, r.ctx)}`}: ${reason(err)}`,
    );
    return [];
  }
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!;
}

function echo(spec: OptionSpec, raw: string, ctx: ParseContext): string {
  const shown = spec.echo ? spec.echo(raw, ctx) : raw;
  const clipped = shown.length > 120 ? `${shown.slice(0, 117)}...` : shown;
  return JSON.stringify(clipped);
}

function splitWords(raw: string): string[] {
  return raw.split(/\s+/).filter(Boolean);
}

/** Variables with our prefix that are read outside the options tables. */
const ENV_READ_ELSEWHERE = new Set(['TERMINATION_LOG', 'TMPDIR', 'CACHE'].map((n) => ENV_PREFIX + n));

/**
 * HELM_INSTALLER_* variables the command does not read: a typo (HELM_INSTALLER_DRYRUN) would
 * otherwise be ignored in silence and the option not mean what the Job says. Warnings, not
 * errors: a Job may carry variables for another command.
 */
export function unknownEnvVars(table: OptionTable, env: NodeJS.ProcessEnv, command: string): string[] {
  const known = new Set(Object.values(table).map((spec) => spec.env));
  const squash = (name: string) => name.replace(/_/g, '');
  return Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !known.has(name) && !ENV_READ_ELSEWHERE.has(name))
    .sort()
    .map((name) => {
      const near = [...known].find((k) => squash(k) === squash(name) || editDistance(k, name) <= 2);
      return `${name} is not an option of ${command} and is ignored${near ? `; did you mean ${near}?` : ''}`;
    });
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}
