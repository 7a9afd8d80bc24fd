// Stage "config": the options every command shares, declared once (flag, env var, parser,
// default), and the parsers that turn a flag or an environment string into a typed value.
// Every option has an environment variable because a Job sets env, not argv. A parser throws
// OptionValueError saying what it expected; options.ts adds which flag and env var it was.
import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path';
import type { SetArgument } from '../helm/helm-args.js';
import { packageRoot } from '../common/package-root.js';
import { parseRegistryAddress } from '../common/image-reference.js';
import type { LogFormat } from '../common/logger.js';
import { list, optionalList, type OptionsOf, rest, value } from './options.js';
import { OptionValueError } from '../common/errors.js';
import { parseRenderFlags } from '../helm/render-flags.js';
import { maskSetArgument, setExpression } from './set-expressions.js';

/** Go duration syntax, which is what helm's --timeout parses (`90s`, `5m`, `1h30m`). */
const GO_DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;

const UNIT_SECONDS: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
/** A wait beyond a day is a mistake (and Go's duration overflows near 292 years). */
const MAX_TIMEOUT_SECONDS = 24 * 3600;

export function parseTimeout(raw: string): string {
  const v = raw.trim();
  if (v.length > 40 || !GO_DURATION.test(v))
    throw new OptionValueError('expected a duration such as 300s, 10m or 1h30m');
  let seconds = 0;
  for (const m of v.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) seconds += Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  if (seconds <= 0 || seconds > MAX_TIMEOUT_SECONDS)
    throw new OptionValueError('expected a duration above 0 and at most 24h');
  return v;
}

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`90s`, `1m30s`) in milliseconds. Pure; the input is validated first. */
export function durationMs(value: string): number {
  let total = 0;
  for (const m of value.trim().matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * UNIT_MS[m[2]!]!;
  return total;
}

/** A duration option (Go syntax, or 0) as milliseconds. */
export function parseDurationMs(raw: string): number {
  const v = raw.trim();
  if (v === '0') return 0;
  if (v.length > 40 || !GO_DURATION.test(v)) throw new OptionValueError('expected a duration such as 30s, 5m or 1h');
  return durationMs(v);
}

export function parseHistoryMax(raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isInteger(n) || n < 0 || n > 1_000_000) {
    throw new OptionValueError('expected a whole number >= 0 (0 keeps every revision)');
  }
  return n;
}

function parseLogFormat(raw: string): LogFormat {
  if (raw !== 'json' && raw !== 'pretty') throw new OptionValueError('expected json or pretty');
  return raw;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'] as const;
function parseLogLevel(raw: string): string {
  const v = raw.trim().toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(v))
    throw new OptionValueError(`expected one of ${LOG_LEVELS.join(', ')}`);
  return v;
}

export function oneOf<T extends string>(...choices: T[]) {
  return (raw: string): T => {
    if (!(choices as string[]).includes(raw))
      throw new OptionValueError(`expected ${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`);
    return raw as T;
  };
}

export type TakeOwnership = 'first-install' | 'always' | 'never';
export const parseTakeOwnership = oneOf<TakeOwnership>('first-install', 'always', 'never');

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function parseReleaseName(raw: string): string {
  // Helm's rule: a DNS-1123 subdomain of at most 53 characters (it becomes part of object names).
  if (raw.length > 53 || !DNS_SUBDOMAIN.test(raw)) {
    throw new OptionValueError(
      "expected a release name: lowercase letters, digits, '-' and '.', at most 53 characters",
    );
  }
  return raw;
}

export function parseNamespace(raw: string): string {
  if (raw.length > 63 || !DNS_LABEL.test(raw)) {
    throw new OptionValueError(
      "expected a namespace name: lowercase letters, digits and '-', at most 63 characters, starting and ending with a letter or digit",
    );
  }
  return raw;
}

/** An object's name as Kubernetes checks most (a Job's: the Job the installer runs in). */
export function parseObjectName(raw: string): string {
  const v = raw.trim();
  if (v.length > 253 || !DNS_SUBDOMAIN.test(v)) {
    throw new OptionValueError(
      "expected an object name: lowercase letters, digits, '-' and '.', at most 253 characters",
    );
  }
  return v;
}

/** An object's uid (metadata.uid: a UUID the API server gave it). */
export function parseUid(raw: string): string {
  const v = raw.trim();
  if (!/^[0-9a-zA-Z-]{1,64}$/.test(v))
    throw new OptionValueError('expected an object uid such as 3f0f6c4e-5f1a-4b61-9a57-0c1e0e9f2b8d');
  return v;
}

function parseSecretName(raw: string): string {
  if (raw.length > 253 || !DNS_SUBDOMAIN.test(raw)) {
    throw new OptionValueError(
      "expected a Secret name: lowercase letters, digits, '-' and '.', at most 253 characters",
    );
  }
  return raw;
}

export function parseRegistry(raw: string): string {
  if (raw.length > 255) throw new OptionValueError('expected host[:port][/namespace] of at most 255 characters');
  const port = /^[^/]*:(\d+)(\/|$)/.exec(raw.trim())?.[1];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535))
    throw new OptionValueError(`port ${port.slice(0, 12)} is out of range (1-65535)`);
  try {
    return parseRegistryAddress(raw).address;
  } catch (err) {
    throw new OptionValueError(
      (err as Error).message.replace(/^Local registry address "[^"]*":? ?/, '').trim() +
        ' (expected host[:port][/namespace], e.g. registry.local:5000/myapp, no https://)',
    );
  }
}

/**
 * A KOTS app slug, written as the `kots.io/app-slug` annotation of every object. KOTS makes its
 * slugs with gosimple/slug (lowercase letters, digits and '-'); an annotation value may hold more,
 * but a value KOTS can never have would only make `kots remove` miss every object, silently.
 */
export function parseAppSlug(raw: string): string {
  const v = raw.trim();
  if (v.length > 253 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v)) {
    throw new OptionValueError(
      "expected a KOTS app slug: lowercase letters, digits and '-', at most 253 characters, starting and ending with a letter or digit",
    );
  }
  return v;
}

/** A path: non-empty, no NUL, bounded. Whether it exists is checked where it is read (exit 3). */
export function parsePath(raw: string): string {
  if (raw.trim() === '' || raw.includes('\0') || raw.length > 4096)
    throw new OptionValueError('expected a file or directory path');
  return raw;
}

/**
 * Repeatable list options. From the environment a list is one string: paths are separated like
 * PATH/KUBECONFIG (`:`); --set expressions by newlines (a single one may hold commas, as in helm).
 */
export function splitPathList(raw: string): string[] {
  return raw
    .split(delimiter)
    .map((s) => s.trim())
    .filter(Boolean);
}

export function splitLines(raw: string): string[] {
  return raw
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Vendor base values belong to the bundled chart: `<app-dir>/values` is the default only when the
 * chart is the one under the app directory. A `--chart` from elsewhere gets none unless
 * `--base-values` names them (a demo chart's values mixed into another chart break its schema).
 */
export function defaultBaseValues(appDir: string, chart?: string): string[] {
  if (chart !== undefined) {
    const inside = relative(resolve(appDir), resolve(chart));
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) return [];
  }
  const dir = join(appDir, 'values');
  return existsSync(dir) ? [dir] : [];
}

const maskedSet =
  (kind: SetArgument['kind']) => (raw: string, ctx: { secrets: import('../common/secrets.js').SecretRegistry }) =>
    maskSetArgument(kind, raw, ctx.secrets);

/** The options every command takes (chart, release, values, registry, helm, logging). */
export const commonOptionTable = {
  chart: value(
    '--chart <path>',
    'CHART',
    'chart directory or .tgz (default: the one chart under the app directory)',
    parsePath,
  ),
  appDir: value(
    '--app-dir <dir>',
    'APP_DIR',
    'where the bundled chart and vendor values live',
    parsePath,
    join(packageRoot(), 'app'),
    '<package>/app',
  ),
  baseValues: optionalList(
    '--base-values <path>',
    'BASE_VALUES',
    "vendor base values, file or directory (repeatable; ':'-separated in env; default: <app-dir>/values, for the bundled chart only)",
    {
      split: splitPathList,
      parse: parsePath,
    },
  ),
  values: list(
    '-f, --values <path>',
    'VALUES',
    "customer values, file or directory of *.yaml (repeatable, in order; ':'-separated in env)",
    {
      split: splitPathList,
      parse: parsePath,
    },
  ),
  set: list('--set <expr>', 'SET', 'helm --set (repeatable; one per line in env)', {
    split: splitLines,
    parse: setExpression('set'),
    echo: maskedSet('set'),
  }),
  setString: list('--set-string <expr>', 'SET_STRING', 'helm --set-string (repeatable; one per line in env)', {
    split: splitLines,
    parse: setExpression('set-string'),
    echo: maskedSet('set-string'),
  }),
  setJson: list('--set-json <expr>', 'SET_JSON', 'helm --set-json (repeatable; one per line in env)', {
    split: splitLines,
    parse: setExpression('set-json'),
    echo: maskedSet('set-json'),
  }),
  releasesFile: value(
    '--releases-file <file>',
    'RELEASES_FILE',
    'a release plan: several charts in dependency order (default: <app-dir>/releases.yaml when it exists and no --chart is given)',
    parsePath,
  ),
  release: value('--release <name>', 'RELEASE', 'release name (default: the chart name)', parseReleaseName),
  namespace: value(
    '-n, --namespace <ns>',
    'NAMESPACE',
    "target namespace (default: helm's: the pod's own namespace in a Job)",
    parseNamespace,
  ),
  registry: value(
    '--registry <address>',
    'REGISTRY',
    'local registry host[:port][/namespace] (KOTS LocalRegistryAddress); unset = no rewrite',
    parseRegistry,
  ),
  imagePullSecret: value(
    '--image-pull-secret <name>',
    'IMAGE_PULL_SECRET',
    'pull secret added to every pod spec when rewriting',
    parseSecretName,
  ),
  imagePath: list(
    '--image-path <kind:path>',
    'IMAGE_PATHS',
    'extra image location in a custom resource, e.g. Prometheus:spec.image (repeatable)',
    {
      split: (v) => v.split(/[\s,]+/).filter(Boolean),
      parse: parseImagePathSpec,
      max: 200,
    },
  ),
  appSlug: value(
    '--app-slug <slug>',
    'APP_SLUG',
    'KOTS app slug: set as the kots.io/app-slug annotation of every object applied, so `kubectl kots remove --undeploy` removes them',
    parseAppSlug,
  ),
  helmBin: {
    ...value(
      '--helm-bin <path>',
      'HELM_BIN',
      'helm binary (default: pinned helm in a dev checkout, else helm on PATH)',
      parsePath,
    ),
    env: 'HELM_BIN',
  },
  logFormat: value(
    '--log-format <format>',
    'LOG_FORMAT',
    'json (one object per line) or pretty',
    parseLogFormat,
    'json' as LogFormat,
  ),
  logLevel: value('--log-level <level>', 'LOG_LEVEL', LOG_LEVELS.join(', '), parseLogLevel, 'info'),
};

/**
 * render and images: `-- --kube-version 1.31 --api-versions monitoring.coreos.com/v1`, flags
 * every helm template of the run gets (checked by render-flags.ts). The same variable as
 * install's helm arguments (which go to helm upgrade verbatim).
 */
export function renderHelmArgs() {
  return rest(
    'HELM_ARGS',
    'after --: helm template flags for every render (--kube-version, --api-versions, --skip-tests, --is-upgrade, ...)',
    parseRenderFlags,
  );
}

export type CommonOptionValues = OptionsOf<typeof commonOptionTable>;

export interface CommonOptions {
  chart?: string;
  appDir: string;
  baseValues: string[];
  values: string[];
  sets: SetArgument[];
  /** A release plan (src/inputs/plan-file.ts): several charts instead of one. */
  releasesFile?: string;
  release?: string;
  namespace?: string;
  registry?: string;
  imagePullSecret?: string;
  /** Extra image locations in custom resources: `Kind:path` (see docs/options.md). */
  imagePaths: string[];
  /** The KOTS app slug every applied object is annotated with (`kots.io/app-slug`). */
  appSlug?: string;
  helmBin?: string;
  logFormat: LogFormat;
  logLevel: string;
}

/** The common options as the stages use them: --set* in helm's order, base values defaulted. */
export function toCommonOptions(raw: CommonOptionValues): CommonOptions {
  return {
    chart: raw.chart,
    appDir: raw.appDir,
    baseValues: raw.baseValues ?? defaultBaseValues(raw.appDir, raw.chart),
    values: raw.values,
    // helm applies --set-json, then --set, then --set-string, whatever the argv order.
    sets: [...raw.setJson, ...raw.set, ...raw.setString],
    releasesFile: raw.releasesFile,
    release: raw.release,
    namespace: raw.namespace,
    registry: raw.registry,
    imagePullSecret: raw.imagePullSecret,
    imagePaths: raw.imagePath,
    appSlug: raw.appSlug,
    helmBin: raw.helmBin,
    logFormat: raw.logFormat,
    logLevel: raw.logLevel,
  };
}

/** `Kind:path` or `group/version/Kind:path`, checked here; airgap.ts parses it for use. */
function parseImagePathSpec(raw: string): string {
  if (raw.length > 500 || !/^(?:([^:]+)\/)?([A-Za-z][A-Za-z0-9]*):([A-Za-z0-9_.\-[\]*]+)$/.test(raw.trim())) {
    throw new OptionValueError(
      'expected Kind:path, e.g. Promotion:spec.image or Workflow:spec.templates[].container.image',
    );
  }
  return raw.trim();
}
