// What the plan's run reads: install's options (a plan answers "what would this install do") and
// how to print the answer. The table that parses them lives with the command,
// src/cli/commands/plan-options.ts.
import type { InstallOptions } from '../reconcile/install-options.js';

export type PlanFormat = 'text' | 'json' | 'markdown';

export interface PlanCommandOptions extends InstallOptions {
  output: PlanFormat;
  showSecrets: boolean;
}
