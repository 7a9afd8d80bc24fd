// A plan, printed: to stdout as text (colour only on a TTY without NO_COLOR), JSON or Markdown.
// `plan` exits 10 when the install would change something, 0 when not; `install` with
// HELM_INSTALLER_PLAN_ONLY=true (a Job) logs the plan as text, writes the count line to the
// termination message, and exits 0: a preview is not a failed Job.
import { kubeModule } from '../cluster/kube-client.js';
import { ExitCode } from '../common/exit-codes.js';
import { installRun } from '../reconcile/install-run.js';
import type { RunState } from '../run/run-state.js';
import { startRun } from '../run/run-context.js';
import { appScope, type AppInput } from '../inputs/app-input.js';
import { writeSummary } from '../run/report.js';
import { formatJson } from './format-json.js';
import { formatMarkdown } from './format-markdown.js';
import { formatText, useColor } from './format-text.js';
import type { PlanCommandOptions } from './plan-options.js';
import { buildPlanReport } from './preview.js';
import { countLine, decisionLine } from './summary.js';

export async function writePlan(
  o: PlanCommandOptions,
  state: RunState,
  mode: { planOnly: boolean },
  input: AppInput,
): Promise<number> {
  // A release plan: every release's plan and the app revision it would make (release-plan-preview.ts).
  if (appScope(input)) return (await import('./release-plan-preview.js')).writeReleasesPlan(o, state, input, mode);
  // The cluster client's module loads while the chart and helm are found: a plan always needs it.
  void kubeModule().catch(() => undefined);
  // Logs on stderr where stdout is the plan; on stdout in a Job, where the plan is the log.
  const run = installRun(await startRun(o, state, mode.planOnly ? 1 : 2, { deferChartValues: true }));
  const report = await buildPlanReport(run, { showSecrets: o.showSecrets });
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
