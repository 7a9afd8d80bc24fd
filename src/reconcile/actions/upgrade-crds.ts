// Actions "crds" and "finish-crds", around helm's install or upgrade, under the Lease (src/crds/
// says what and why). Helm never updates crds/ and cannot drop a stored version, so the CRDs go
// first (--crds) and their refusal changes nothing; the versions a new CRD drops are dropped only
// once helm's upgrade succeeded. A render without a CRD asks the cluster nothing. The CRD step is
// the first of the upgrade path, so it names the path's reason in the log.
import type { CrdOutcome } from '../../crds/upgrade-crds.js';
import type { ActionRun, Narration } from './action.js';

export interface CrdsPort extends Narration {
  /** The chart as this run renders it, crds/ included. */
  manifests: string;
  /** src/crds' upgradeCrds with the run's --crds policy (loaded only when the render has a CRD). */
  upgradeCrds(): Promise<CrdOutcome>;
}

export const applyChartCrds: ActionRun<'crds', CrdsPort> = async (p, step) => {
  const { goal } = step;
  p.logger.info(
    { release: p.release, reason: goal.reason },
    `${goal.kind === 'upgrade' ? 'upgrading' : 'installing'}: ${goal.reason}`,
  );
  if (!p.manifests.includes('CustomResourceDefinition')) return { crds: { outcome: undefined, finished: false } };
  p.stage('CRDs');
  return { crds: { outcome: await p.upgradeCrds(), finished: false } };
};

export const finishChartCrds: ActionRun<'finish-crds', unknown> = async (_p, step) => {
  await step.crds.finish();
  return { crds: { outcome: step.crds, finished: true } };
};
