// Suspend (--suspend, HELM_INSTALLER_SUSPEND; the KOTS checkbox "pause automatic changes"): for a
// maintenance window in which the customer's team works on the release by hand. As Flux's
// `spec.suspend`, nothing is reconciled and nothing removed: the run reads no release state,
// takes no Lease and writes nothing but its Suspended Event (one per release), then exits 0. With
// --plan-only too, the pause wins and says so (pause-preview.ts).
import { loadChart } from '../inputs/chart.js';
import { connectKube, helmDefaultNamespace } from '../cluster/kube-client.js';
import { createBaseContext } from '../run/base-context.js';
import { ExitCode } from '../common/exit-codes.js';
import { writeSummary } from '../run/report.js';
import { appGraph, type AppInput } from '../inputs/app-input.js';
import type { RunState } from '../run/run-state.js';
import { recordOutcome } from '../run/record.js';
import type { InstallOptions } from '../reconcile/install-options.js';
import { suspendedNext, suspendedNote } from './pause-preview.js';

export async function suspendedRun(o: InstallOptions, state: RunState, input: AppInput): Promise<number> {
  const started = Date.now();
  const { logger } = createBaseContext(o, 1, state);
  state.progress.action = 'suspended';
  // The kubeconfig is only read (helm's default namespace): no request is made here.
  const namespace = o.namespace ?? helmDefaultNamespace((await connectKube()).config);
  const releases: { release: string; namespace: string }[] = [];
  for (const r of appGraph(o, input, namespace, process.env).releases)
    releases.push({
      // One chart without --release is named by its chart.
      release: r.name ?? (await loadChart({ chart: o.chart, appDir: o.appDir }, { deferValues: true })).name,
      namespace: r.namespace,
    });
  for (const r of releases) {
    logger.info({ release: r.release, namespace: r.namespace }, `suspended: ${r.namespace}/${r.release} left as it is`);
    recordOutcome(state, { reason: 'Suspended', ...r, note: suspendedNote(o), started });
  }
  const head = `helm-installer: suspended; nothing changed (${releases.map((r) => `${r.namespace}/${r.release}`).join(', ')})`;
  writeSummary(state.terminationLog, { summary: [head, ...suspendedNext(o)].join('\n') });
  return ExitCode.ok;
}
