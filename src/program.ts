// The CLI: wires flags and environment variables to typed options and calls a command. No logic
// lives here; nothing runs at import time.
import { Command, Option } from 'commander';
import { join } from 'node:path';
import {
  type CommonOptions,
  defaultBaseValues,
  type InstallOptions,
  parseHistoryMax,
  parseLogFormat,
  parseReleaseName,
  parseTakeOwnership,
  parseTimeout,
  splitLines,
  splitPathList,
  splitWords,
} from './config.js';
import { UsageError } from './errors.js';
import type { SetArgument, SetKind } from './helm/helm-args.js';
import { packageRoot } from './helm/helm-binary.js';

export interface ImagesOptions extends CommonOptions {
  format: 'list' | 'kots';
  check?: string;
  unionValues: string[];
  unionSets: string[];
}

export interface ValuesCommandOptions extends CommonOptions {
  explain: boolean;
  output: 'yaml' | 'json';
  showSecrets: boolean;
}

export interface CommandHandlers {
  install(options: InstallOptions): Promise<number>;
  values(options: ValuesCommandOptions): Promise<number>;
  render(options: CommonOptions): Promise<number>;
  images(options: ImagesOptions): Promise<number>;
}

const ENV = 'HELM_INSTALLER_';
const collect =
  (split: (v: string) => string[]) =>
  (value: string, previous: string[] = []): string[] => [...previous, ...split(value)];

function opt(flags: string, description: string, env: string): Option {
  return new Option(flags, description).env(ENV + env);
}

function addCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(opt('--chart <path>', 'chart directory or .tgz (default: the one chart under the app directory)', 'CHART'))
    .addOption(opt('--app-dir <dir>', 'where the bundled chart and vendor values live', 'APP_DIR').default(join(packageRoot(), 'app')))
    .addOption(
      opt('--base-values <path>', 'vendor base values, file or directory (repeatable; default: <app-dir>/values)', 'BASE_VALUES').argParser(
        collect(splitPathList),
      ),
    )
    .addOption(
      opt('-f, --values <path>', "customer values, file or directory of *.yaml (repeatable, in order; env: ':'-separated)", 'VALUES')
        .argParser(collect(splitPathList))
        .default([]),
    )
    .addOption(opt('--set <expr>', 'helm --set (repeatable; env: one per line)', 'SET').argParser(collect(splitLines)).default([]))
    .addOption(opt('--set-string <expr>', 'helm --set-string (repeatable)', 'SET_STRING').argParser(collect(splitLines)).default([]))
    .addOption(opt('--set-json <expr>', 'helm --set-json (repeatable)', 'SET_JSON').argParser(collect(splitLines)).default([]))
    .addOption(opt('--release <name>', 'release name (default: the chart name)', 'RELEASE').argParser(parseReleaseName))
    .addOption(opt('-n, --namespace <ns>', "target namespace (default: helm's: the pod's own namespace in a Job)", 'NAMESPACE'))
    .addOption(opt('--registry <address>', 'local registry host[:port][/namespace] (KOTS LocalRegistryAddress); unset = no rewrite', 'REGISTRY'))
    .addOption(opt('--image-pull-secret <name>', 'pull secret added to every pod spec when rewriting', 'IMAGE_PULL_SECRET'))
    .addOption(
      opt('--image-path <kind:path>', 'extra image location in a custom resource, e.g. Prometheus:spec.image (repeatable)', 'IMAGE_PATHS')
        .argParser(collect((v) => v.split(/[\s,]+/).filter(Boolean)))
        .default([]),
    )
    .addOption(new Option('--helm-bin <path>', 'helm binary (default: pinned helm in a dev checkout, else helm on PATH)').env('HELM_BIN'))
    .addOption(opt('--log-format <format>', 'json (one object per line) or pretty', 'LOG_FORMAT').default('json').argParser(parseLogFormat))
    .addOption(opt('--log-level <level>', 'debug, info, warn, error', 'LOG_LEVEL').default('info'));
}

function toCommonOptions(raw: Record<string, unknown>): CommonOptions {
  const appDir = String(raw.appDir);
  const sets = (kind: SetKind, key: string): SetArgument[] => ((raw[key] as string[]) ?? []).map((expression) => ({ kind, expression }));
  return {
    chart: raw.chart as string | undefined,
    appDir,
    baseValues: (raw.baseValues as string[] | undefined) ?? defaultBaseValues(appDir),
    values: raw.values as string[],
    sets: [...sets('set-json', 'setJson'), ...sets('set', 'set'), ...sets('set-string', 'setString')],
    release: raw.release as string | undefined,
    namespace: raw.namespace as string | undefined,
    registry: raw.registry as string | undefined,
    imagePullSecret: raw.imagePullSecret as string | undefined,
    imagePaths: raw.imagePath as string[],
    helmBin: raw.helmBin as string | undefined,
    logFormat: raw.logFormat as CommonOptions['logFormat'],
    logLevel: String(raw.logLevel),
  };
}

/** The program and the exit code its action reported (commander itself only throws). */
export function buildProgram(handlers: CommandHandlers, version: string, argv: string[]): { program: Command; exitCode(): number } {
  const program = new Command('helm-installer')
    .description('Installs the bundled Helm chart: merged values, images rewritten for a local registry, helm upgrade --install.')
    .version(version)
    .exitOverride()
    .showHelpAfterError()
    .configureHelp({ showGlobalOptions: true });

  let exitCode = 0;
  const done = (code: number) => {
    exitCode = code;
  };

  addCommonOptions(program.command('install'))
    .description('helm upgrade --install the chart with --wait, rolling back on failure')
    .addOption(opt('--timeout <duration>', 'how long helm waits for resources (Go duration)', 'TIMEOUT').default('10m').argParser(parseTimeout))
    .addOption(opt('--history-max <n>', 'revisions helm keeps (0 = all)', 'HISTORY_MAX').default(5).argParser(parseHistoryMax))
    .addOption(opt('--dry-run', "helm's server-side dry run: nothing changes", 'DRY_RUN').default(false))
    .addOption(opt('--termination-log <path>', 'where the failure summary is written', 'TERMINATION_LOG').default('/dev/termination-log'))
    .addOption(
      opt('--take-ownership <when>', 'adopt existing objects without helm annotations: first-install, always, never', 'TAKE_OWNERSHIP')
        .default('first-install')
        .argParser(parseTakeOwnership),
    )
    .addOption(opt('--skip-preflight', 'do not check that rewritten images exist in the registry', 'SKIP_PREFLIGHT').default(false))
    .addOption(opt('--registry-ca-file <file>', 'CA bundle for an HTTPS registry with a private CA', 'REGISTRY_CA_FILE'))
    .addOption(opt('--pull-secret-file <file>', 'a .dockerconfigjson file with the registry credentials for the preflight', 'PULL_SECRET_FILE'))
    .argument('[helm-args...]', 'after --: passed to helm verbatim (env HELM_INSTALLER_HELM_ARGS, split on spaces)')
    .action(async (helmArgs: string[], raw: Record<string, unknown>) => {
      const dashDash = argv.indexOf('--');
      if (helmArgs.length > 0 && (dashDash < 0 || argv.length - dashDash - 1 !== helmArgs.length)) {
        throw new UsageError(`unexpected argument "${helmArgs[0]}"`, { hint: 'Put arguments meant for helm after `--`.' });
      }
      const fromEnv = process.env[`${ENV}HELM_ARGS`];
      done(
        await handlers.install({
          ...toCommonOptions(raw),
          timeout: raw.timeout as string,
          historyMax: Number(raw.historyMax),
          dryRun: Boolean(raw.dryRun),
          terminationLog: String(raw.terminationLog),
          takeOwnership: raw.takeOwnership as InstallOptions['takeOwnership'],
          skipPreflight: Boolean(raw.skipPreflight),
          registryCaFile: raw.registryCaFile as string | undefined,
          pullSecretFile: raw.pullSecretFile as string | undefined,
          helmArgs: helmArgs.length > 0 ? helmArgs : fromEnv ? splitWords(fromEnv) : [],
        }),
      );
    });

  addCommonOptions(program.command('values'))
    .description('print the merged user-supplied values exactly as helm receives them')
    .addOption(opt('--explain', 'show, per leaf, which layer set it', 'EXPLAIN').default(false))
    .addOption(
      opt('-o, --output <format>', 'yaml or json', 'OUTPUT')
        .choices(['yaml', 'json'])
        .default('yaml'),
    )
    .addOption(opt('--show-secrets', 'print values of secret-looking keys instead of [REDACTED]', 'SHOW_SECRETS').default(false))
    .action(async (raw: Record<string, unknown>) => {
      done(
        await handlers.values({
          ...toCommonOptions(raw),
          explain: Boolean(raw.explain),
          output: raw.output as 'yaml' | 'json',
          showSecrets: Boolean(raw.showSecrets),
        }),
      );
    });

  addCommonOptions(program.command('render'))
    .description('print the final manifests (helm template plus the image rewrite); no cluster needed')
    .action(async (raw: Record<string, unknown>) => {
      done(await handlers.render(toCommonOptions(raw)));
    });

  addCommonOptions(program.command('images'))
    .description('list every image the chart deploys (hooks and subcharts included)')
    .addOption(opt('--format <format>', 'list (one per line) or kots (Application additionalImages)', 'IMAGES_FORMAT').choices(['list', 'kots']).default('list'))
    .addOption(opt('--check <file>', "exit 6 when this KOTS Application's additionalImages misses an image", 'IMAGES_CHECK'))
    .addOption(
      opt('--union-values <file>', 'extra values file to render too, for images behind toggles (repeatable)', 'UNION_VALUES')
        .argParser(collect(splitPathList))
        .default([]),
    )
    .addOption(opt('--union-set <expr>', 'extra --set to render too, each its own pass (repeatable)', 'UNION_SET').argParser(collect(splitLines)).default([]))
    .action(async (raw: Record<string, unknown>) => {
      done(
        await handlers.images({
          ...toCommonOptions(raw),
          format: raw.format as 'list' | 'kots',
          check: raw.check as string | undefined,
          unionValues: raw.unionValues as string[],
          unionSets: raw.unionSet as string[],
        }),
      );
    });

  return { program, exitCode: () => exitCode };
}
