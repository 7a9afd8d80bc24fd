// `helm-installer install`: the orchestrator. It only chains the stages: chart -> values ->
// render check (templates and schema, before the cluster is touched) -> image preflight ->
// release state -> helm upgrade --install -> report. Failures propagate as typed errors to
// main.ts, which writes the summary and the exit code.
import { writeSync } from 'node:fs';
import type { InstallOptions } from '../config.js';
import { ReleaseBusyError } from '../errors.js';
import { isPending } from '../helm/helm-results.js';
import { successSummary } from '../report.js';
import type { RunState } from '../run-state.js';
import { toValuesArguments } from '../values.js';
import { startCommand, withAirgap } from './prepare.js';

export async function installCommand(o: InstallOptions, state: RunState): Promise<number> {
  const started = Date.now();
  state.terminationLog = o.terminationLog;
  const { logger, chart, release, resolved, helm } = await startCommand(o, state, 1);
  const progress = state.progress;
  logger.info(
    { chart: `${chart.name}-${chart.version}`, release, namespace: o.namespace, layers: resolved.layers, sets: resolved.sets.length, helm: helm.version },
    'starting',
  );

  return withAirgap(o, chart, helm, toValuesArguments(resolved), async (airgap) => {
    const values = toValuesArguments(resolved, airgap.generated.map((g) => g.file));

    progress.action = 'render check';
    const manifests = await helm.template(
      { release, chart: chart.path, namespace: o.namespace, values, postRendererArgs: airgap.postRendererArgs },
      airgap.env,
    );

    if (airgap.preflight && !o.skipPreflight) {
      progress.action = 'registry preflight';
      await airgap.preflight(manifests, logger, { pullSecretFile: o.pullSecretFile, caFile: o.registryCaFile });
    }

    progress.action = 'reading release state';
    const history = await helm.history(release, o.namespace);
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
    await helm.upgradeInstall(
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

    const revision = o.dryRun ? undefined : (await helm.history(release, o.namespace, 1)).at(-1)?.revision;
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
