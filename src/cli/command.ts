// A command as the CLI sees it: its name, its options table and its handler, declared together
// in the command's own module. program.ts registers the flags; options.ts resolves the values.
import type { OptionsOf, OptionTable } from '../options/options.js';
import type { RunState } from '../run/run-state.js';

export interface CommandDefinition<S extends OptionTable = OptionTable> {
  name: string;
  description: string;
  options: S;
  /** Exit code of the run; failures are thrown as InstallerError. */
  run(options: OptionsOf<S>, state: RunState): Promise<number>;
}

export function defineCommand<S extends OptionTable>(definition: CommandDefinition<S>): CommandDefinition<S> {
  return definition;
}
