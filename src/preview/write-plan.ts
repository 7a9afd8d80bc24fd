// A plan, printed: to stdout as text (colour only on a TTY without NO_COLOR), JSON or Markdown.
// `plan` exits 10 when the install would change something, 0 when not; `install` with
// HELM_INSTALLER_PLAN_ONLY=true (a Job) logs the plan as text, writes the count line to the
// termination message, and exits 0: a preview is not a failed Job.
import { kubeModule } from '../cluster/kube-client.js';
import { ExitCode } from '../common/exit-codes.js';
import type { InstallRun } from '../reconcile/install-run.js';
import type { RunState } from '../run/run-state.js';
import { appGraph, appScope, type AppInput } from '../inputs/app-input.js';
import { writeSummary } from '../run/report.js';
import { formatJson } from './format-json.js';
import { formatMarkdown } from './format-markdown.js';
import { formatText, useColor } from './format-text.js';
import type { PlanCommandOptions } from './plan-options.js';
import { planReports } from './plan-reports.js';
import type { PlanReport } from './plan-types.js';
import { countLine, decisionLine } from './summary.js';

export async function writePlan(
  o: PlanCommandOptions,
  state: RunState,
  mode: { planOnly: boolean },
  input: AppInput,
): Promise<number> {
  // The cluster client's module loads while the chart and helm are found: a plan always needs it.
  void kubeModule().catch(() => undefined);
  // Logs on stderr where stdout is the plan; on stdout in a Job, where the plan is the log.
  const destination = mode.planOnly ? 1 : 2;
  // A release plan: its graph in the cluster first, and after every release's plan the app
  // revision it would make and what it would uninstall (release-plan-preview.ts).
  const app = appScope(input) ? await import('./release-plan-preview.js') : undefined;
  const plan = await app?.openPlanPreview(o, state, input, destination);
  const releases = plan?.releases ?? appGraph(o, input, o.namespace ?? 'default', process.env).releases;
  const reports = await planReports(releases, {
    state,
    maxParallel: o.maxParallel,
    showSecrets: o.showSecrets,
    destination,
  });
  if (app && plan)
    return app.writeReleasesPlan(
      o,
      state,
      plan,
      reports.map((r) => r.report),
      mode,
    );
  return writeOnePlan(o, state, reports[0]!, mode);
}

/** One chart's plan: printed as it is, the log line, and the count line for a Job. */
async function writeOnePlan(
  o: PlanCommandOptions,
  state: RunState,
  { report, run }: { report: PlanReport; run: InstallRun },
  mode: { planOnly: boolean },
): Promise<number> {
  const text =
    o.output === 'json'
      ? formatJson(report)
      : o.output === 'markdown'
        ? formatMarkdown(report)
        : formatText(report, { color: !mode.planOnly && useColor(process.stdout, process.env) });
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(text, (error) => (error ? reject(error) : resolve())),
  );
  const counts = countLine(report.entries);
  run.logger.info(
    { release: report.release, decision: report.decision.action, seconds: (Date.now() - run.started) / 1000 },
    `plan: ${decisionLine(report.decision)}; ${counts}`,
  );
  if (mode.planOnly) {
    writeSummary(state.terminationLog, { terminationMessage: `plan only: ${report.decision.action}; ${counts}` });
    return ExitCode.ok;
  }
  return report.decision.action === 'nothing' ? ExitCode.ok : ExitCode.changesPlanned;
}
