// Recreating objects whose fields cannot change, before helm upgrades: the exact deletes (the
// propagation each needs, only the object read), the wait until each is gone, `never`'s refusal,
// and a lost Lease or a signal ending it with their own errors.
import { describe, expect, it } from 'vitest';
import type { ImmutableChange } from '../../../src/drift/immutable-changes.js';
import { recreateImmutable, type RecreatePort } from '../../../src/reconcile/actions/recreate-immutable.js';
import { HelmOperationError, TransientError } from '../../../src/common/errors.js';
import { narration, recorder, stoppable, type Recorder } from './fake-port.js';

const sts: ImmutableChange = {
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  name: 'db',
  namespace: 'shop',
  path: '/apis/apps/v1/namespaces/shop/statefulsets/db',
  fields: ['spec.serviceName'],
  how: 'orphan',
  reason: 'spec: Forbidden: updates to statefulset spec for fields other than ... are forbidden',
  uid: 'uid-db',
};
const svc: ImmutableChange = {
  ...sts,
  apiVersion: 'v1',
  kind: 'Service',
  name: 'web',
  path: '/api/v1/namespaces/shop/services/web',
  fields: ['spec.clusterIP'],
  how: 'delete',
  reason: 'spec.clusterIP: Invalid value: field is immutable',
  uid: 'uid-web',
};

/** Objects that stay `reads` reads after their delete, then are gone. */
function port(
  r: Recorder,
  changes: ImmutableChange[],
  o: { mode?: 'auto' | 'never'; reads?: number; deleteFails?: Error } = {},
): RecreatePort & ReturnType<typeof stoppable> {
  const left = new Map<string, number>();
  const stop = stoppable();
  return {
    ...narration(r),
    ...stop,
    recreateImmutable: o.mode ?? 'auto',
    immutableChanges: async (previous) => r.call('find immutable changes', changes, previous),
    objects: async () => ({
      delete: async (path, policy, uid) => {
        r.call('delete', undefined, path, policy, uid);
        if (o.deleteFails) throw o.deleteFails;
        left.set(path, o.reads ?? 0);
        return true;
      },
      get: async (path) => {
        const n = left.get(path)!;
        left.set(path, n - 1);
        return r.call(
          'get',
          n > 0 ? { metadata: { uid: changes.find((c) => c.path === path)!.uid } } : undefined,
          path,
        );
      },
    }),
    timeoutMs: 60_000,
    apiError: (error, doing) => new TransientError(`${doing}: ${(error as Error).message}`),
  };
}

describe('recreate', () => {
  it('nothing that cannot change: nothing deleted', async () => {
    const r = recorder();
    expect(await recreateImmutable(port(r, []), { kind: 'recreate', previous: 2 })).toEqual({ recreated: [] });
    expect(r.calls).toEqual(['stage checking fields that cannot change', 'find immutable changes 2']);
  });

  it('each object deleted as it needs, only that object, and waited for', async () => {
    const r = recorder();
    expect(await recreateImmutable(port(r, [sts, svc]), { kind: 'recreate', previous: 2 })).toEqual({
      recreated: [sts, svc],
    });
    const acting = r.calls.filter((c) => c.startsWith('delete') || c.startsWith('get'));
    expect(acting.sort()).toEqual(
      [
        `delete ${sts.path} Orphan uid-db`,
        `get ${sts.path}`,
        `delete ${svc.path} Background uid-web`,
        `get ${svc.path}`,
      ].sort(),
    );
    expect(r.calls.slice(0, 3)).toEqual([
      'stage checking fields that cannot change',
      'find immutable changes 2',
      'stage recreating objects whose fields cannot change',
    ]);
    expect(r.calls).toContain(
      'info recreating StatefulSet db in namespace shop: spec.serviceName cannot change; deleted with its pods orphaned: they and their PVCs stay, and the new StatefulSet adopts them',
    );
  });

  it('an object still there is read again until it is gone', async () => {
    const r = recorder();
    await recreateImmutable(port(r, [svc], { reads: 2 }), { kind: 'recreate', previous: 5 });
    expect(r.calls.filter((c) => c.startsWith('get'))).toEqual([
      `get ${svc.path}`,
      `get ${svc.path}`,
      `get ${svc.path}`,
    ]);
  });

  it('--recreate-immutable never: exit 4 before anything is deleted, with the command that does it by hand', async () => {
    const r = recorder();
    const error = await recreateImmutable(port(r, [svc], { mode: 'never' }), { kind: 'recreate', previous: 2 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HelmOperationError);
    expect((error as Error).message).toContain('kubectl delete service web -n shop --cascade=background');
    expect(r.calls.some((c) => c.startsWith('delete'))).toBe(false);
  });

  it('a failed delete after the Lease was lost ends with the Lease error', async () => {
    const r = recorder();
    const p = port(r, [svc], { deleteFails: new Error('connection reset') });
    const lost = new Error('the release lease was taken over');
    p.loseLease.abort(lost);
    await expect(recreateImmutable(p, { kind: 'recreate', previous: 2 })).rejects.toBe(lost);
  });

  it('a failed delete otherwise is named as the API error', async () => {
    const r = recorder();
    await expect(
      recreateImmutable(port(r, [svc], { deleteFails: new Error('forbidden') }), { kind: 'recreate', previous: 2 }),
    ).rejects.toThrow('deleting Service web in namespace shop to recreate it: forbidden');
  });
});
