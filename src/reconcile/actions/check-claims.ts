// Action "claims", under the Lease, first of an upgrade of a release deployed before, so its
// refusal changes nothing (the CRD step and the recreate come after it): the claims that hold
// data and that no workload of the new chart version mounts (drift/orphaned-claims.ts: a
// StatefulSet deleted or renamed, or its claim template renamed). With --orphaned-claims refuse
// (the default) the run ends, exit 3, naming the claims, the StatefulSet that used them and the
// ways out; with allow the upgrade goes on and the claims stay, named in the log.
import type { OrphanedClaims } from '../../drift/orphaned-claims.js';
import { describeOrphans } from '../../drift/orphaned-claims.js';
import { InvalidInputError } from '../../common/errors.js';
import { stopSignal, type ActionRun, type Narration, type Stoppable } from './action.js';

export type OrphanedClaimsPolicy = 'refuse' | 'allow';

export interface ClaimsPort extends Narration, Stoppable {
  orphanedClaims: OrphanedClaimsPolicy;
  /** The claims this revision's StatefulSets used that the run's render leaves unmounted. */
  findOrphanedClaims(previous: number, signal: AbortSignal): Promise<OrphanedClaims[]>;
}

export const checkClaims: ActionRun<'claims', ClaimsPort> = async (p, step) => {
  p.stage('checking claims the new version leaves behind');
  const orphans = await p.findOrphanedClaims(step.previous, stopSignal(p));
  if (orphans.length === 0) return { orphaned: [] };
  if (p.orphanedClaims === 'refuse') throw orphansRefused(p.release, orphans);
  for (const o of orphans) {
    p.logger.warn(
      { statefulSet: o.statefulSet, claims: o.claims },
      `${describeOrphans(o)}; they stay as they are (--orphaned-claims allow), and the new version starts without them`,
    );
  }
  return { orphaned: orphans };
};

/** Exit 3, before any change: the claims, their StatefulSet, and the ways out (one line each: the summary clips long lines). */
function orphansRefused(release: string, orphans: OrphanedClaims[]): InvalidInputError {
  const first = orphans[0]!;
  return new InvalidInputError(
    [
      `upgrade of release ${release} not started: the new chart version leaves claims that hold data behind, and the app would start on new, empty ones:`,
      ...orphans.map((o) => `  ${describeOrphans(o)}`),
    ].join('\n'),
    {
      hint:
        `Reuse the claim with the chart's value for an existing claim (often persistence.existingClaim=${first.claims[0]}; see the chart's upgrade notes), ` +
        'or accept leaving it behind with --orphaned-claims allow (HELM_INSTALLER_ORPHANED_CLAIMS=allow): the claim and its data stay, unmounted. Nothing was changed.',
    },
  );
}
