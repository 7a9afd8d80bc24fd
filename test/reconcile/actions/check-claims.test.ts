// The claims check before an upgrade: nothing left behind, nothing said; refuse (exit 3, the
// claims, their StatefulSet and both ways out, before any other call); allow (each named in a
// warning, the upgrade goes on).
import { describe, expect, it } from 'vitest';
import { checkClaims, type ClaimsPort } from '../../../src/reconcile/actions/check-claims.js';
import { InvalidInputError } from '../../../src/common/errors.js';
import { ExitCode } from '../../../src/common/exit-codes.js';
import type { OrphanedClaims } from '../../../src/drift/orphaned-claims.js';
import { narration, recorder, stoppable, type Recorder } from './fake-port.js';

const db: OrphanedClaims = { statefulSet: { name: 'db', namespace: 'shop' }, kept: false, claims: ['data-db-0'] };

function port(r: Recorder, orphans: OrphanedClaims[], policy: 'refuse' | 'allow'): ClaimsPort {
  return {
    ...narration(r),
    ...stoppable(),
    orphanedClaims: policy,
    findOrphanedClaims: async (previous) => r.call('find orphaned claims', orphans, previous),
  };
}

describe('claims', () => {
  it('none left behind: found nothing, said nothing', async () => {
    const r = recorder();
    expect(await checkClaims(port(r, [], 'refuse'), { kind: 'claims', previous: 2 })).toEqual({ orphaned: [] });
    expect(r.calls).toEqual(['stage checking claims the new version leaves behind', 'find orphaned claims 2']);
  });

  it('refuse: exit 3 naming the claim, its StatefulSet and both ways out', async () => {
    const r = recorder();
    const error = await checkClaims(port(r, [db], 'refuse'), { kind: 'claims', previous: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).exitCode).toBe(ExitCode.invalidInput);
    expect((error as Error).message).toBe(
      'upgrade of release shop not started: the new chart version leaves claims that hold data behind, and the app would start on new, empty ones:\n' +
        '  StatefulSet db in namespace shop is deleted or renamed by the new chart version; no workload of the new version mounts its claims, which hold data: data-db-0',
    );
    expect((error as InvalidInputError).hint).toContain('persistence.existingClaim=data-db-0');
    expect((error as InvalidInputError).hint).toContain(
      '--orphaned-claims allow (HELM_INSTALLER_ORPHANED_CLAIMS=allow)',
    );
  });

  it('allow: each named in a warning, and the upgrade goes on', async () => {
    const r = recorder();
    expect(await checkClaims(port(r, [db], 'allow'), { kind: 'claims', previous: 2 })).toEqual({ orphaned: [db] });
    expect(r.calls.at(-1)).toBe(
      'warn StatefulSet db in namespace shop is deleted or renamed by the new chart version; no workload of the new version mounts its claims, which hold data: data-db-0; they stay as they are (--orphaned-claims allow), and the new version starts without them',
    );
  });
});
