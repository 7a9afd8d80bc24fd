// Correcting drift: the revision's manifest read, each drifted object put back; what the API
// server refused is found (and logged), never acted on here: the decision picks the upgrade.
import { describe, expect, it } from 'vitest';
import type { ObjectDrift } from '../../../src/drift/detect-drift.js';
import { correctReleaseDrift, type CorrectDriftPort } from '../../../src/reconcile/actions/correct-drift.js';
import type { NotPutBack } from '../../../src/reconcile/decide.js';
import { narration, recorder, type Recorder } from './fake-port.js';

const image: ObjectDrift = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  namespace: 'shop',
  name: 'web',
  missing: false,
  fields: [{ path: '/spec/replicas', live: '3', desired: '1' }],
};
const service: ObjectDrift = {
  apiVersion: 'v1',
  kind: 'Service',
  namespace: 'shop',
  name: 'web',
  missing: false,
  fields: [{ path: '/spec/clusterIP', live: '10.0.0.9', desired: '10.0.0.1' }],
};

function port(r: Recorder, failed: NotPutBack[]): CorrectDriftPort {
  return {
    ...narration(r),
    revisionManifest: async (revision) => r.call('read manifest', `manifest of revision ${revision}`, revision),
    correct: async (manifest, drift) => {
      r.call(
        'put back',
        undefined,
        manifest,
        drift.map((d) => `${d.kind}/${d.name}`),
      );
      return { corrected: drift.filter((d) => !failed.some((f) => f.drift === d)), failed };
    },
  };
}

describe('correct drift', () => {
  it('all put back', async () => {
    const r = recorder();
    const found = await correctReleaseDrift(port(r, []), {
      kind: 'correct-drift',
      revision: 4,
      drift: [image, service],
    });
    expect(found).toEqual({
      correction: { revision: 4, drift: [image, service], corrected: [image, service], notPutBack: [] },
    });
    expect(r.calls).toEqual([
      'stage correcting drift',
      'read manifest 4',
      'put back manifest of revision 4 ["Deployment/web","Service/web"]',
    ]);
  });

  it('one refused: found and named, nothing more done', async () => {
    const r = recorder();
    const refused = { drift: service, reason: 'spec.clusterIP: field is immutable' };
    const found = await correctReleaseDrift(port(r, [refused]), {
      kind: 'correct-drift',
      revision: 4,
      drift: [image, service],
    });
    expect(found).toEqual({
      correction: { revision: 4, drift: [image, service], corrected: [image], notPutBack: [refused] },
    });
    expect(r.calls.at(-1)).toBe(
      'warn cannot be put back as it was: Service/shop/web; helm upgrades the release instead',
    );
    expect(r.calls).toHaveLength(4);
  });
});
