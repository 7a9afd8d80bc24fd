// A one-chart install (`install --chart`) leaves the same `helm-installer-<app>-last-run` ConfigMap
// a release plan's run leaves (last-run.ts, the one writer), so that its support bundle also reads
// the installer's outcome after the Job's pod is gone. The app of one chart is its release (as
// `troubleshoot-specs --chart` names it, troubleshoot/render-app.ts), and the ConfigMap goes to the
// release's namespace, which is the install namespace that SupportBundle looks in.
import { connectKube } from '../cluster/kube-client.js';
import type { InstallerError } from '../common/errors.js';
import type { InstallOptions } from '../reconcile/install-options.js';
import { failureSummary, toInstallerError } from '../run/report.js';
import type { RunState } from '../run/run-state.js';
import { lastRunData, writeLastRun } from './last-run.js';
import type { ReleaseOutcome } from './release-outcome.js';

/** Runs the one release's install, then leaves its outcome; the run's exit code or error stands as it was. */
export async function withLastRun(o: InstallOptions, state: RunState, install: () => Promise<number>): Promise<number> {
  const started = Date.now();
  // A dry run changes nothing in the cluster, this ConfigMap included.
  if (o.dryRun) return install();
  let exitCode: number;
  try {
    exitCode = await install();
  } catch (error) {
    const e = toInstallerError(error);
    await leave(
      o,
      state,
      [{ key: key(state), status: 'failed', error: e, seconds: (Date.now() - started) / 1000 }],
      e.exitCode,
      failureSummary(e, state.progress, state.secrets),
    );
    throw error;
  }
  await leave(
    o,
    state,
    [{ key: key(state), status: 'done', action: 'install', seconds: (Date.now() - started) / 1000 }],
    exitCode,
    successText(state),
  );
  return exitCode;
}

const key = (state: RunState) => `${state.progress.namespace}/${state.progress.release}`;

/** What the run's outcomes say (already masked when recorded, run/record.ts), one line each. */
function successText(state: RunState): string {
  return (state.outcomes ?? []).map((x) => `${x.reason} ${x.namespace}/${x.release}: ${x.note}`).join('\n');
}

/** A cluster that stopped answering must not hold the run's end (its summary, its exit) for long. */
const WRITE_TIMEOUT_MS = 5_000;

// Only once the run knew its release and reached the cluster (its namespace is resolved on
// connecting): before that there is no app to name, nor a cluster to leave it in. Never fails the
// run: a namespace that was never created (the run stopped before it) is only logged.
async function leave(
  o: InstallOptions,
  state: RunState,
  outcomes: ReleaseOutcome[],
  exitCode: number,
  summary: string,
): Promise<void> {
  const { release, namespace } = state.progress;
  if (release === undefined || namespace === undefined) return;
  try {
    await writeLastRun(
      await connectKube(),
      namespace,
      release,
      lastRunData(outcomes, exitCode, summary, state.secrets),
      o.appSlug,
      AbortSignal.timeout(WRITE_TIMEOUT_MS),
    );
  } catch (error) {
    state.logger?.warn(
      { err: state.secrets.maskText((error as InstallerError).message ?? String(error)) },
      "could not leave the run's outcome for the support bundle",
    );
  }
}
