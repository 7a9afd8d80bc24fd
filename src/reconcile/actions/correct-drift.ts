// Action "correct drift": the inputs equal the deployed revision's, but objects of its manifest
// were deleted or changed by hand. They are put back as the release last applied them (a
// server-side apply that takes the release's fields back; fields under an ignore rule are left
// to whoever owns them), without a new revision: the release already says what they should be.
// What the API server refuses (an immutable field) is found, not acted on: the decision then
// picks helm's own upgrade (decide.ts).
import type { ObjectDrift } from '../../drift/detect-drift.js';
import type { NotPutBack } from '../decide.js';
import type { ActionRun, Narration } from './action.js';

export interface CorrectDriftPort extends Narration {
  /** The manifest a revision applied, from its release Secret. */
  revisionManifest(revision: number): Promise<string>;
  /** Puts each drifted object back (drift/correct-drift.ts, with the run's ignore rules). */
  correct(manifest: string, drift: ObjectDrift[]): Promise<{ corrected: ObjectDrift[]; failed: NotPutBack[] }>;
}

export const correctReleaseDrift: ActionRun<'correct-drift', CorrectDriftPort> = async (p, step) => {
  p.stage('correcting drift');
  const manifest = await p.revisionManifest(step.revision);
  const outcome = await p.correct(manifest, step.drift);
  for (const f of outcome.failed) {
    p.logger.warn(
      { object: objectName(f.drift), reason: f.reason },
      `cannot be put back as it was: ${objectName(f.drift)}; helm upgrades the release instead`,
    );
  }
  return {
    correction: {
      revision: step.revision,
      drift: step.drift,
      corrected: outcome.corrected,
      notPutBack: outcome.failed,
    },
  };
};

export function objectName(d: Pick<ObjectDrift, 'kind' | 'namespace' | 'name'>): string {
  return `${d.kind}/${d.namespace ? `${d.namespace}/` : ''}${d.name}`;
}
