// `helm-installer install`: the orchestrator. It only chains the stages: chart -> values ->
// render check (templates and schema, before the cluster is touched), image preflight and
// release state read, all three at once -> helm upgrade --install -> report. Failures propagate as typed errors to
// main.ts, which writes the summary and the exit code.
import { writeSync } from 'node:fs';
import { defineCommand } from '../command.js';
import { type CommonOptions, commonOptionTable, parseHistoryMax, parsePath, parseTakeOwnership, parseTimeout, toCommonOptions } from '../config.js';
import { ReleaseBusyError } from '../errors.js';
import { type OptionsOf, rest, switchOption, value } from '../options.js';
import { isPending } from '../helm/helm-results.js';
import { awaitInOrder } from '../overlap.js';
import { successSummary } from '../report.js';
import type { RunState } from '../run-state.js';
import { toValuesArguments } from '../values.js';
import { startCommand, withAirgap } from './prepare.js';

export const installOptionTable = {
  ...commonOptionTable,
  timeout: value('--timeout <duration>', 'TIMEOUT', 'how long helm waits for resources (Go duration)', parseTimeout, '10m'),
  historyMax: value('--history-max <n>', 'HISTORY_MAX', 'revisions helm keeps (0 = all)', parseHistoryMax, 5),
  dryRun: switchOption('--dry-run', 'DRY_RUN', "helm's server-side dry run: nothing changes"),
  terminationLog: value('--termination-log <path>', 'TERMINATION_LOG', 'where the failure summary is written', parsePath, '/dev/termination-log'),
  takeOwnership: value(
    '--take-ownership <when>',
    'TAKE_OWNERSHIP',
    'adopt existing objects without helm annotations: first-install, always, never',
    parseTakeOwnership,
    'first-install',
  ),
  skipPreflight: switchOption('--skip-preflight', 'SKIP_PREFLIGHT', 'do not check that rewritten images exist in the registry'),
  registryCaFile: value('--registry-ca-file <file>', 'REGISTRY_CA_FILE', 'CA bundle for an HTTPS registry with a private CA', parsePath),
  pullSecretFile: value('--pull-secret-file <file>', 'PULL_SECRET_FILE', 'a .dockerconfigjson file with the registry credentials for the preflight', parsePath),
  helmArgs: rest('HELM_ARGS', 'after --: passed to helm verbatim'),
};

export type InstallOptions = CommonOptions & Omit<OptionsOf<typeof installOptionTable>, keyof typeof commonOptionTable>;

export const installDefinition = defineCommand({
  name: 'install',
  description: 'helm upgrade --install the chart with --wait, rolling back on failure',
  options: installOptionTable,
  run: (o, state) => installCommand({ ...o, ...toCommonOptions(o) }, state),
});

export async function installCommand(o: InstallOptions, state: RunState): Promise<number> {
  const started = Date.now();
  const { logger, chart, release, resolved, helm } = await startCommand(o, state, 1);
  const progress = state.progress;
  logger.info(
    { chart: `${chart.name}-${chart.version}`, release, namespace: o.namespace, layers: resolved.layers, sets: resolved.sets.length, helm: helm.version },
    'starting',
  );

  return withAirgap(o, { chart, helm, release, logger }, toValuesArguments(resolved), async (airgap) => {
    const values = toValuesArguments(resolved, airgap.generated.map((g) => g.file));

    // The render check, the registry preflight and the release state read do not depend on each
    // other: all at once, a failure still reported in this stage order (bad input before a
    // missing image before an unreachable cluster).
    const [, , history] = await awaitInOrder(progress, [
      ['render check', helm.template({ release, chart: chart.path, namespace: o.namespace, values, postRendererArgs: airgap.postRendererArgs }, airgap.env)],
      [
        'registry preflight',
        airgap.preflight && !o.skipPreflight
          ? airgap.preflight(logger, { pullSecretFile: o.pullSecretFile, caFile: o.registryCaFile, secrets: state.secrets })
          : Promise.resolve(),
      ],
      ['reading release state', helm.history(release, o.namespace)],
    ] as const);

    const last = history.at(-1);
    if (last && isPending(last.status)) {
      throw new ReleaseBusyError(`release ${release} is ${last.status} (revision ${last.revision}): another operation holds it or was killed`, {
        hint: 'If no other installer is running, the release was left by a killed operation: run `helm rollback` to the last deployed revision, then run again.',
      });
    }
    const everDeployed = history.some((h) => h.status === 'deployed' || h.status === 'superseded');
    const takeOwnership = o.takeOwnership === 'always' || (o.takeOwnership === 'first-install' && !everDeployed);

    progress.action = o.dryRun ? 'dry run' : everDeployed ? 'upgrade' : 'install';
    logger.info({ release, action: progress.action, takeOwnership, revisions: history.length }, 'running helm upgrade --install');
    const { revision } = await helm.upgradeInstall(
      {
        release,
        chart: chart.path,
        namespace: o.namespace,
        values,
        timeout: o.timeout,
        historyMax: o.historyMax,
        dryRun: o.dryRun,
        takeOwnership,
        postRendererArgs: airgap.postRendererArgs,
        extraArgs: o.helmArgs,
      },
      { signal: state.signal, env: airgap.env },
    );

    const summary = successSummary({
      release,
      namespace: o.namespace,
      action: o.dryRun ? 'dry run' : everDeployed ? 'upgraded' : 'installed',
      revision,
      chart: `${chart.name}-${chart.version}`,
      seconds: (Date.now() - started) / 1000,
    });
    logger.info({ release, revision, dryRun: o.dryRun }, 'done');
    writeSync(2, `${summary}\n`);
    return 0;
  });
}
