// Action "correct drift": the inputs equal the deployed revision's, but objects of its manifest
// were deleted or changed by hand. They are put back as the release last applied them (a
// server-side apply that takes the release's fields back; fields under an ignore rule are left
// to whoever owns them), without a new revision: the release already says what they should be.
import { correctDrift } from '../../drift/correct-drift.js';
import type { ObjectDrift } from '../../drift/detect-drift.js';
import type { Action } from '../decide.js';
import { revisionManifest } from '../read-state.js';
import type { ClusterRun, InstallRun } from '../run-context.js';

export interface CorrectionOutcome {
  corrected: ObjectDrift[];
  failed: { drift: ObjectDrift; reason: string }[];
}

export async function correctReleaseDrift(run: InstallRun, cluster: ClusterRun, action: Extract<Action, { kind: 'correct-drift' }>): Promise<CorrectionOutcome> {
  run.stage('correcting drift');
  const manifest = await revisionManifest(cluster.kube, cluster.records, action.revision);
  const outcome = await correctDrift(cluster.kube, manifest, action.drift, { releaseNamespace: cluster.namespace, release: run.release, rules: run.ignore });
  for (const f of outcome.failed) {
    run.logger.warn({ object: objectName(f.drift), reason: f.reason }, `cannot be put back as it was: ${objectName(f.drift)}; helm upgrades the release instead`);
  }
  return outcome;
}

export function objectName(d: Pick<ObjectDrift, 'kind' | 'namespace' | 'name'>): string {
  return `${d.kind}/${d.namespace ? `${d.namespace}/` : ''}${d.name}`;
}
