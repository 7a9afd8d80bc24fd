// `helm-installer troubleshoot-specs`: the app's Troubleshoot Preflight, SupportBundle and
// Redactor (src/troubleshoot/), made from what every release of the app renders; `--format kots`
// (the default) templated for a KOTS release, `plain` for the given namespace and registry.
// `--check FILE` fails (exit 6) when a committed file is not what the app renders now.
import { existsSync, readFileSync } from 'node:fs';
import { InvalidInputError, PreflightError } from '../../common/errors.js';
import { defineCommand } from '../command.js';
import {
  type CommonOptions,
  commonOptionTable,
  oneOf,
  parsePath,
  renderHelmArgs,
  toCommonOptions,
} from '../../options/config.js';
import { value } from '../../options/options.js';
import type { RunState } from '../../run/run-state.js';
import { resolveInput } from '../../inputs/app-input.js';
import { appSpecs } from '../../troubleshoot/app-specs.js';
import { renderApp } from '../../troubleshoot/render-app.js';
import { specTarget } from '../../troubleshoot/spec-targets.js';
import { firstDifference, specsYaml } from '../../troubleshoot/specs-yaml.js';

export interface TroubleshootSpecsOptions extends CommonOptions {
  format: 'kots' | 'plain';
  check?: string;
  installerJob?: string;
  helmArgs: string[];
}

export const troubleshootSpecsDefinition = defineCommand({
  name: 'troubleshoot-specs',
  description:
    "write the app's Troubleshoot Preflight and SupportBundle (KOTS runs them before each deploy and for a support bundle), from what every release renders",
  options: {
    ...commonOptionTable,
    format: value(
      '--format <format>',
      'TROUBLESHOOT_FORMAT',
      'kots (templated for the KOTS release) or plain (for --namespace and --registry as given)',
      oneOf('kots', 'plain'),
      'kots' as 'kots' | 'plain',
    ),
    check: value(
      '--check <file>',
      'TROUBLESHOOT_CHECK',
      'exit 6 when this committed specs file is not what the app renders now',
      parsePath,
    ),
    installerJob: value(
      '--installer-job <name>',
      'TROUBLESHOOT_INSTALLER_JOB',
      "the installer Job's name (default <app>-installer, with -repl{{ Sequence }} for kots)",
      (raw: string) => raw.trim(),
    ),
    helmArgs: renderHelmArgs(),
  },
  run: (o, state) =>
    troubleshootSpecsCommand(
      { ...toCommonOptions(o), format: o.format, check: o.check, installerJob: o.installerJob, helmArgs: o.helmArgs },
      state,
    ),
});

export async function troubleshootSpecsCommand(o: TroubleshootSpecsOptions, state: RunState): Promise<number> {
  const input = resolveInput(o, state.progress);
  const rendered = await renderApp(o, state, input);
  const target = specTarget({
    format: o.format,
    app: rendered.app,
    installNamespace: o.namespace ?? 'default',
    installerJob: o.installerJob,
    images: rendered.images,
    pullSecret: o.imagePullSecret,
  });
  const text = specsYaml(appSpecs(rendered.releases, target));
  if (o.check === undefined) {
    process.stdout.write(text);
    return 0;
  }
  state.progress.action = `checking ${o.check}`;
  if (!existsSync(o.check))
    throw new InvalidInputError(`${o.check} does not exist`, {
      file: o.check,
      hint: 'Write it with helm-installer troubleshoot-specs > FILE, and commit it.',
    });
  const diff = firstDifference(readFileSync(o.check, 'utf8'), text);
  if (diff) {
    throw new PreflightError(
      `${o.check} is not what the app renders now (line ${diff.line}):\n  committed: ${diff.committed}\n  now:       ${diff.fresh}`,
      {
        file: o.check,
        line: diff.line,
        hint: `Regenerate it: helm-installer troubleshoot-specs${o.format === 'plain' ? ' --format plain' : ''} > ${o.check}, and commit it.`,
      },
    );
  }
  process.stdout.write(`${o.check}: the Troubleshoot specs are up to date\n`);
  return 0;
}
