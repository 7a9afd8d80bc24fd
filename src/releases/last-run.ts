// What the last run of a release plan ended with, left in a
// ConfigMap beside the inventory for the support bundle (src/troubleshoot/support-bundle-spec.ts reads it): the termination message is
// gone with the Job's pod (a successful Job is deleted, a failed one after its TTL), this is not.
// One line per key, so that Troubleshoot's textAnalyze finds each in the collected JSON.
import type { KubeClients } from '../cluster/kube-client.js';
import type { SecretRegistry } from '../common/secrets.js';
import { exitCodeMeaning } from '../common/exit-codes.js';
import type { AppRevision } from './app-revision.js';
import { applyAppConfigMap } from './inventory.js';
import { appLine } from './plan-summary.js';
import type { ReleaseOutcome } from './release-outcome.js';

export function lastRunName(app: string): string {
  return `helm-installer-${app}-last-run`.slice(0, 253);
}

/** The ConfigMap's data (pure): every value masked, one line each but the summary. */
export function lastRunData(
  outcomes: ReleaseOutcome[],
  exitCode: number,
  summary: string,
  secrets: SecretRegistry,
  revision?: AppRevision,
): Record<string, string> {
  const failed = outcomes.find((o) => o.status === 'failed' || o.status === 'prune failed');
  const error = failed && 'error' in failed ? failed.error : undefined;
  const oneLine = (text: string) => secrets.maskText(text.split('\n')[0] ?? '');
  return {
    exitCode: String(exitCode),
    meaning: exitCodeMeaning(exitCode),
    cause: failed && error ? oneLine(`${failed.key}: ${error.message}`) : '',
    next: error?.hint ? oneLine(error.hint) : '',
    appRevision: revision ? appLine(revision) : '',
    summary,
  };
}

/** A server-side apply, as the inventory's (the Role's create and patch on ConfigMaps); `signal` bounds it. */
export async function writeLastRun(
  kube: KubeClients,
  namespace: string,
  app: string,
  data: Record<string, string>,
  appSlug?: string,
  signal?: AbortSignal,
): Promise<void> {
  await applyAppConfigMap(kube, {
    namespace,
    name: lastRunName(app),
    app,
    data,
    appSlug,
    signal,
    what: "the last run's outcome",
  });
}
