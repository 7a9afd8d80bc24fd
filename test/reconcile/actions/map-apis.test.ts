// Mapping removed APIs in the release records: the exact calls, what is logged, and what it found.
import { describe, expect, it } from 'vitest';
import type { ApiMapping } from '../../../src/drift/map-removed-apis.js';
import { mapRemovedApis, type MapApisPort } from '../../../src/reconcile/actions/map-apis.js';
import { narration, recorder, type Recorder } from './fake-port.js';

const pdb: ApiMapping = {
  kind: 'PodDisruptionBudget',
  name: 'web',
  from: 'policy/v1beta1',
  to: 'policy/v1',
  removedIn: '1.25',
};
const psp: ApiMapping = {
  kind: 'PodSecurityPolicy',
  name: 'shop-psp',
  from: 'policy/v1beta1',
  to: null,
  removedIn: '1.25',
};

function port(r: Recorder, found: Record<number, ApiMapping[]>, fail?: Error): MapApisPort {
  return {
    ...narration(r),
    namespace: 'shop',
    mapRecord: async (revision) => {
      r.call('map record', undefined, revision);
      if (fail) throw fail;
      return { mappings: found[revision] ?? [], copy: `helm-installer.unmapped.shop.v${revision}` };
    },
    restoreCommand: (revision) => `restore ${revision}`,
  };
}

describe('map-apis', () => {
  it('rewrites each record, names each mapping and where the original is', async () => {
    const r = recorder();
    const found = await mapRemovedApis(port(r, { 3: [pdb, psp] }), {
      kind: 'map-apis',
      records: [{ revision: 3, mappings: [pdb, psp] }],
    });
    expect(found).toEqual({ mapped: [{ revision: 3, mappings: [pdb, psp], copy: 'helm-installer.unmapped.shop.v3' }] });
    expect(r.calls).toEqual([
      'stage mapping removed APIs in the release record',
      'info rewriting release record revision 3: it names APIs this cluster no longer serves',
      'map record 3',
      'warn removed API in the stored record: PodDisruptionBudget/web: policy/v1beta1 -> policy/v1 (policy/v1beta1 removed in Kubernetes 1.25)',
      'warn removed API in the stored record: PodSecurityPolicy/shop-psp: policy/v1beta1 dropped from the record (removed in Kubernetes 1.25 with no successor)',
      'warn release record revision 3 named APIs this cluster no longer serves (it was upgraded since): rewrote it as helm-mapkubeapis does; the original is kept in Secret shop/helm-installer.unmapped.shop.v3',
    ]);
  });

  it('a record another run mapped meanwhile: nothing logged, nothing left to map', async () => {
    const r = recorder();
    const found = await mapRemovedApis(port(r, {}), {
      kind: 'map-apis',
      records: [
        { revision: 2, mappings: [pdb] },
        { revision: 3, mappings: [pdb] },
      ],
    });
    expect(found).toEqual({
      mapped: [
        { revision: 2, mappings: [], copy: 'helm-installer.unmapped.shop.v2' },
        { revision: 3, mappings: [], copy: 'helm-installer.unmapped.shop.v3' },
      ],
    });
    const rewriting = (n: number) =>
      `info rewriting release record revision ${n}: it names APIs this cluster no longer serves`;
    expect(r.calls).toEqual([
      'stage mapping removed APIs in the release record',
      rewriting(2),
      'map record 2',
      rewriting(3),
      'map record 3',
    ]);
  });

  it('a failed rewrite ends the run with its error', async () => {
    const r = recorder();
    await expect(
      mapRemovedApis(port(r, {}, new Error('updating sh.helm.release.v1.shop.v3: conflict')), {
        kind: 'map-apis',
        records: [{ revision: 3, mappings: [pdb] }],
      }),
    ).rejects.toThrow('conflict');
  });
});
