// The plan command's options: install's own (a plan answers "what would this install do", so it
// takes exactly install's inputs, env vars included) and how to print the answer. The typed
// object the preview reads is preview/plan-options.ts's PlanCommandOptions.
import { oneOf } from '../../options/config.js';
import { installOptionTable } from './install-options.js';
import { switchOption, value } from '../../options/options.js';
import type { PlanFormat } from '../../preview/plan-options.js';

export const planOptionTable = {
  ...installOptionTable,
  output: value(
    '-o, --output <format>',
    'OUTPUT',
    'text, json (schema in src/preview/README.md) or markdown (for a pull request)',
    oneOf('text', 'json', 'markdown'),
    'text' as PlanFormat,
  ),
  showSecrets: switchOption(
    '--show-secrets',
    'SHOW_SECRETS',
    'show Secret data and secret-looking values in the diffs (masked: changed or unchanged only)',
  ),
};
