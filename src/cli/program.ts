// The CLI: registers each command's flags from its options table and hands the resolved, typed
// options to its handler. Commander only splits argv; values are parsed (flags and env alike) by
// options.ts, and commander's own complaints become usage errors in main.ts. Nothing runs at
// import time.
import { Command, Option } from 'commander';
import type { CommandDefinition } from './command.js';
import { UsageError } from '../common/errors.js';
import { type GivenValue, type OptionTable, resolveOptions, unknownEnvVars } from '../options/options.js';
import type { RunState } from '../run/run-state.js';

/** The program and the exit code its action reported (commander itself only throws). */
export function buildProgram(
  commands: CommandDefinition[],
  version: string,
  argv: string[],
  state: RunState,
  env: NodeJS.ProcessEnv = process.env,
): { program: Command; exitCode(): number } {
  const program = new Command('helm-installer')
    .description(
      'Installs the bundled Helm chart: merged values, images rewritten for a local registry, helm upgrade --install.',
    )
    .version(version)
    .exitOverride()
    // Errors are reported by main.ts as a usage error with a summary (and a termination message);
    // commander's help text after an error would bury that summary in the log's tail.
    .configureOutput({ writeErr: () => {}, outputError: () => {} })
    .configureHelp({ showGlobalOptions: true });

  let exitCode = 0;
  for (const definition of commands) {
    const cmd = program.command(definition.name).description(definition.description);
    const attributes = registerOptions(cmd, definition.options);
    cmd.action(async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const raw = command.opts<Record<string, GivenValue>>();
      const given: Record<string, GivenValue> = {};
      for (const [key, attribute] of attributes)
        given[key] = attribute === REST ? restArguments(command, argv) : raw[attribute];
      const options = resolveOptions(definition.options, { given, env, ctx: { secrets: state.secrets } });
      state.warnings = unknownEnvVars(definition.options, env, definition.name);
      // pino-pretty is a chunk of its own in the bundle, loaded only when asked for (logger.ts).
      if ((options as { logFormat?: string }).logFormat === 'pretty')
        await (await import('../common/logger.js')).preparePrettyLogs();
      exitCode = await definition.run(options, state);
    });
  }
  return { program, exitCode: () => exitCode };
}

const REST = Symbol('rest');

function registerOptions(cmd: Command, table: OptionTable): Map<string, string | typeof REST> {
  const attributes = new Map<string, string | typeof REST>();
  for (const [key, spec] of Object.entries(table)) {
    if (spec.kind === 'rest') {
      cmd.argument('[helm-args...]', `${spec.description} [env: ${spec.env}, split on white space]`);
      attributes.set(key, REST);
      continue;
    }
    const defaultText = spec.kind === 'value' && spec.defaultText ? ` (default: ${spec.defaultText})` : '';
    const option = new Option(spec.flags, `${spec.description}${defaultText} [env: ${spec.env}]`);
    if (spec.kind === 'list') option.argParser((v: string, previous: string[] = []) => [...previous, v]);
    cmd.addOption(option);
    attributes.set(key, option.attributeName());
  }
  return attributes;
}

/** Positional arguments are only accepted after `--` (they go to helm verbatim). */
function restArguments(command: Command, argv: string[]): string[] {
  const args = command.args;
  const dashDash = argv.indexOf('--');
  if (args.length > 0 && (dashDash < 0 || argv.length - dashDash - 1 !== args.length)) {
    throw new UsageError(`unexpected argument "${args[0]}"`, { hint: 'Put arguments meant for helm after `--`.' });
  }
  return args;
}
