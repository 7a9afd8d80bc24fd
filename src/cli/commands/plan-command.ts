// `helm-installer plan`: the CLI's wiring only. The run is in src/preview/ (preview.ts).
import { defineCommand } from '../command.js';
import { toCommonOptions } from '../../options/config.js';
import { writePlan } from '../../preview/write-plan.js';
import { planOptionTable } from './plan-options.js';
import { resolveInput } from '../../inputs/app-input.js';

export const planDefinition = defineCommand({
  name: 'plan',
  description: 'show what install would do: the decision, and every object it would create, change or delete',
  options: planOptionTable,
  run: (o, state) => {
    const options = { ...o, ...toCommonOptions(o) };
    return writePlan(options, state, { planOnly: false }, resolveInput(options, state.progress));
  },
});
