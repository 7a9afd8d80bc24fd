// The commands as the top-level help lists them, each module loaded only when that command is
// run or its help shown. So `--version` and `--help` load no command module, and with them no
// pino, yaml, execa or tar: the startup stays near node's own (issue 10: within 2x `helm version`).
import type { CommandDefinition } from '../command.js';

export interface CatalogEntry {
  name: string;
  /** The top-level help line; the same text as the definition's (a unit test checks). */
  description: string;
  load(): Promise<CommandDefinition>;
}

const as = (d: unknown) => d as CommandDefinition;

export const commandCatalog: CatalogEntry[] = [
  {
    name: 'install',
    description: 'helm upgrade --install the chart with --wait, rolling back on failure',
    load: async () => as((await import('./install-command.js')).installDefinition),
  },
  {
    name: 'plan',
    description: 'show what install would do: the decision, and every object it would create, change or delete',
    load: async () => as((await import('./plan-command.js')).planDefinition),
  },
  {
    name: 'values',
    description: 'print the merged user-supplied values exactly as helm receives them',
    load: async () => as((await import('./values-command.js')).valuesDefinition),
  },
  {
    name: 'render',
    description: 'print the final manifests (helm template plus the image rewrite); no cluster needed',
    load: async () => as((await import('./render-command.js')).renderDefinition),
  },
  {
    name: 'export',
    description:
      'write what a GitOps engine (Flux) applies to get the same app: a kustomize base and overlay per release and the Flux files, or (--format helmrelease) a HelmRelease and chart per release; no cluster needed',
    load: async () => as((await import('./export-command.js')).exportDefinition),
  },
  {
    name: 'images',
    description: 'list every image the chart deploys (hooks and subcharts included)',
    load: async () => as((await import('./images-command.js')).imagesDefinition),
  },
  {
    name: 'troubleshoot-specs',
    description:
      "write the app's Troubleshoot Preflight and SupportBundle (KOTS runs them before each deploy and for a support bundle), from what every release renders",
    load: async () => as((await import('./troubleshoot-specs-command.js')).troubleshootSpecsDefinition),
  },
  {
    name: 'check-chart',
    description:
      'check the chart as every command reads it, every dependency vendored in charts/ at the version Chart.lock pins (for CI; no helm, no cluster)',
    load: async () => as((await import('./check-chart-command.js')).checkChartDefinition),
  },
];

/**
 * The command argv names: the first word that is not an option (the program itself takes no
 * option with a value), or the word after `help`.
 */
export function namedCommand(args: string[]): string | undefined {
  const words = args.slice(0, args.includes('--') ? args.indexOf('--') : undefined).filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

/**
 * The definitions to register with commander: the named command loaded in full, the others as
 * listings with their name and description only (commander never runs them: argv names another).
 */
export async function loadCommands(args: string[]): Promise<CommandDefinition[]> {
  const named = namedCommand(args);
  return Promise.all(
    commandCatalog.map(async (entry) =>
      entry.name === named
        ? entry.load()
        : {
            name: entry.name,
            description: entry.description,
            options: {},
            run: () => Promise.reject(new Error(`${entry.name} was not loaded`)),
          },
    ),
  );
}
