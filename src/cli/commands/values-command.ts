// `helm-installer values`: the merged user-supplied values exactly as helm receives them, asked
// of helm itself; `--explain` names the layer of each leaf.
import { basename } from 'node:path';
import { stringify } from 'yaml';
import { defineCommand } from '../command.js';
import { type CommonOptions, commonOptionTable, oneOf, toCommonOptions } from '../../options/config.js';
import { switchOption, value } from '../../options/options.js';
import type { RunState } from '../../run/run-state.js';
import { maskSetExpression } from '../../options/set-expressions.js';
import { explainLeaves, readLayerValues } from '../../inputs/values-explain.js';
import { oneChart, resolveInput } from '../../inputs/app-input.js';
import { startRun } from '../../run/run-context.js';
import { withRenderSetup } from '../../run/render-setup.js';

export interface ValuesCommandOptions extends CommonOptions {
  explain: boolean;
  output: 'yaml' | 'json';
  showSecrets: boolean;
}

export const valuesDefinition = defineCommand({
  name: 'values',
  description: 'print the merged user-supplied values exactly as helm receives them',
  options: {
    ...commonOptionTable,
    explain: switchOption('--explain', 'EXPLAIN', 'show, per leaf, which layer set it'),
    output: value('-o, --output <format>', 'OUTPUT', 'yaml or json', oneOf('yaml', 'json'), 'yaml' as 'yaml' | 'json'),
    showSecrets: switchOption(
      '--show-secrets',
      'SHOW_SECRETS',
      'print values of secret-looking keys instead of [REDACTED]',
    ),
  },
  run: (o, state) =>
    valuesCommand({ ...toCommonOptions(o), explain: o.explain, output: o.output, showSecrets: o.showSecrets }, state),
});

export async function valuesCommand(o: ValuesCommandOptions, state: RunState): Promise<number> {
  oneChart(resolveInput(o, state.progress));
  const run = await startRun(o, state, 2);
  const { resolved, helm, secrets } = run;
  return withRenderSetup(run, async (plan) => {
    const { generated } = plan.airgap;
    const merged = await helm.mergedValues(plan.values);
    // Secrets are masked unless asked for: this output often lands in a log or a ticket.
    const shown = (o.showSecrets ? merged : secrets.maskTree(merged)) as Record<string, unknown>;
    if (!o.explain) {
      process.stdout.write(o.output === 'json' ? `${JSON.stringify(shown, null, 2)}\n` : printYaml(shown));
      return 0;
    }
    const layers = await readLayerValues(
      helm,
      [
        ...resolved.layers.map((l) => ({ file: l.file, label: `${l.source} ${l.file}` })),
        ...generated.map((g) => ({ file: g.file, label: `generated ${g.label}` })),
      ],
      resolved.sets.map((set) => ({
        set,
        label: `--${set.kind} ${maskSetExpression(set.expression, secrets, set.kind)}`,
      })),
    );
    const explained = explainLeaves(shown, layers);
    for (const r of explained)
      process.stdout.write(`${r.path} = ${JSON.stringify(r.value)}    # ${shortLabel(r.layer)}\n`);
    return 0;
  });
}

/**
 * YAML in helm's dialect: YAML 1.1 quoting, so `y`, `on`, `0777` or `12:30` stay strings when the
 * output is fed back to helm with -f.
 */
export function printYaml(values: Record<string, unknown>): string {
  return Object.keys(values).length === 0 ? '{}\n' : stringify(values, { version: '1.1', lineWidth: 0 });
}

function shortLabel(label: string): string {
  const [kind, ...rest] = label.split(' ');
  const what = rest.join(' ');
  return kind === 'vendor' || kind === 'customer' ? `${kind} ${basename(what)}` : label;
}
