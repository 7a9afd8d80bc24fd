// `helm-installer install`: the CLI's wiring only. The options' table is install-options.ts (beside
// it); the run is releases/install-app.ts (the app's releases, one chart a list of one), each
// release by reconcile/install.ts (read state -> decide -> act -> report).
import { defineCommand } from '../command.js';
import { toCommonOptions } from '../../options/config.js';
import { UsageError } from '../../common/errors.js';
import { checkInstallHelmArgs } from '../../helm/render-flags.js';
import { installRelease } from '../../reconcile/install.js';
import { installApp } from '../../releases/install-app.js';
import { installOptionTable } from './install-options.js';
import { tellsOutcomes } from '../../releases/pause-preview.js';
import { resolveInput } from '../../inputs/app-input.js';
import { notifyUrlOf } from '../../options/notify-options.js';
import { tell } from '../../tell/tell.js';

export const installDefinition = defineCommand({
  name: 'install',
  description: 'helm upgrade --install the chart with --wait, rolling back on failure',
  options: installOptionTable,
  run: async (o, state) => {
    const problem = checkInstallHelmArgs(o.helmArgs, o.registry !== undefined || o.imagePullSecret !== undefined);
    if (problem)
      throw new UsageError(problem, {
        hint: 'Remove it from the arguments after -- (or from HELM_INSTALLER_HELM_ARGS).',
      });
    // Both ways of giving the webhook URL at once: exit 2 now, before any cluster call.
    notifyUrlOf(o);
    const options = { ...o, ...toCommonOptions(o) };
    // Events and notifications, written by main.ts once the run has ended, however it ended; a
    // dry run or a plan changes nothing, so it has nothing to tell; a pause tells, also beside a
    // preview (which it wins over: pause-preview.ts).
    if (tellsOutcomes(options)) state.tell = (outcomes) => tell(outcomes, { o: options, state });
    // The app's input, once: one chart, or a release plan; each release is installed by installRelease.
    const input = resolveInput(options, state.progress);
    // A maintenance window: nothing at all is done, for one chart or a whole release plan.
    if (options.suspend) return (await import('../../releases/suspend.js')).suspendedRun(options, state, input);
    // A KOTS "preview only" checkbox: the plan in the Job's log, nothing changed (a release plan's too).
    if (options.planOnly)
      return (await import('../../preview/write-plan.js')).writePlan(
        { ...options, output: 'text', showSecrets: false },
        state,
        { planOnly: true },
        input,
      );
    // One path: the app's releases through the scheduler (one chart is a list of one). One chart
    // leaves no inventory or last-run ConfigMap: written on every failure it broke the promise that
    // bad input, a refused preflight or a usage error leave the cluster untouched (issue 37's note).
    return installApp(options, state, input, installRelease);
  },
});
