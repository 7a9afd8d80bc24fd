// The "owners" step before a first install (issue 36): another release's object refused with
// exit 4 naming it, its release and namespace and the ways out, before anything changed (the only
// call made is the read); `always` takes it and says so; objects no release owns are adopted;
// this release's own are nothing to say. Plus the pure judgement's table.
import { describe, expect, it } from 'vitest';
import { checkOwners, type OwnersPort } from '../../../src/reconcile/actions/check-owners.js';
import { judgeOwnership, ownerOf, type LiveObject } from '../../../src/drift/ownership.js';
import { HelmOperationError } from '../../../src/common/errors.js';
import { ExitCode } from '../../../src/common/exit-codes.js';
import { narration, recorder, stoppable, type Recorder } from './fake-port.js';

const owned = (release: string, namespace: string) => ({
  metadata: {
    annotations: { 'meta.helm.sh/release-name': release, 'meta.helm.sh/release-namespace': namespace },
    labels: { 'app.kubernetes.io/managed-by': 'Helm' },
  },
});
const other: LiveObject = { kind: 'ConfigMap', name: 'settings', namespace: 'shop', live: owned('billing', 'shop') };
const elsewhere: LiveObject = { kind: 'ClusterRole', name: 'reader', live: owned('shop', 'staging') };
const applied: LiveObject = {
  kind: 'Service',
  name: 'web',
  namespace: 'shop',
  live: { metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } } },
};
const labelOnly: LiveObject = {
  kind: 'Secret',
  name: 'db',
  namespace: 'shop',
  live: { metadata: { labels: { 'app.kubernetes.io/managed-by': 'Helm' } } },
};
const ours: LiveObject = { kind: 'Deployment', name: 'web', namespace: 'shop', live: owned('shop', 'shop') };

function port(r: Recorder, objects: LiveObject[]): OwnersPort {
  return {
    ...narration(r),
    ...stoppable(),
    releaseNamespace: 'shop',
    liveObjects: async () => r.call('read live objects', objects),
  };
}

describe('judgeOwnership', () => {
  it('sorts each existing object: ours (nothing), no release (adopted), another release or namespace (refused on a first install, taken with always)', () => {
    const all = [other, elsewhere, applied, labelOnly, ours];
    expect(judgeOwnership(all, { release: 'shop', namespace: 'shop' }, 'first-install')).toEqual({
      adopted: [
        { kind: 'Service', name: 'web', namespace: 'shop' },
        { kind: 'Secret', name: 'db', namespace: 'shop' },
      ],
      taken: [],
      refused: [
        { kind: 'ConfigMap', name: 'settings', namespace: 'shop', owner: { release: 'billing', namespace: 'shop' } },
        { kind: 'ClusterRole', name: 'reader', owner: { release: 'shop', namespace: 'staging' } },
      ],
    });
    const always = judgeOwnership(all, { release: 'shop', namespace: 'shop' }, 'always');
    expect([always.taken.length, always.refused.length, always.adopted.length]).toEqual([2, 0, 2]);
  });

  it('reads the owner from the annotations only', () => {
    expect(ownerOf(other.live)).toEqual({ release: 'billing', namespace: 'shop' });
    expect(ownerOf(labelOnly.live)).toBeUndefined();
    expect(ownerOf({})).toBeUndefined();
  });
});

describe('checkOwners', () => {
  it("another release's object on a first install: exit 4 naming it, its release and namespace and the ways out; only the read was made", async () => {
    const r = recorder();
    const error = (await checkOwners(port(r, [other, applied, ours]), {
      kind: 'owners',
      goal: { kind: 'install', reason: 'no release yet' },
      mode: 'first-install',
    }).catch((e: unknown) => e)) as HelmOperationError;
    expect(error).toBeInstanceOf(HelmOperationError);
    expect(error.exitCode).toBe(ExitCode.helmFailed);
    expect(error.message).toBe(
      [
        '1 object(s) of release shop (namespace shop) belong to another helm release; nothing was changed:',
        '  ConfigMap settings in namespace shop: owned by release billing in namespace shop',
        "--take-ownership first-install adopts only objects no release owns: helm would make these shop's, and uninstalling shop would delete them.",
      ].join('\n'),
    );
    expect(error.hint).toBe(
      'Uninstall them from their release there (helm uninstall billing -n shop, or drop them from its chart), or run once with --take-ownership always (HELM_INSTALLER_TAKE_OWNERSHIP=always) to take them over on purpose.',
    );
    expect(r.calls).toEqual(['stage checking who owns existing objects', 'read live objects']);
  });

  it('always: taken, and said; an object no release owns adopted', async () => {
    const r = recorder();
    const found = await checkOwners(port(r, [other, applied, ours]), {
      kind: 'owners',
      goal: { kind: 'install', reason: 'no release yet' },
      mode: 'always',
    });
    expect(found.owners?.taken).toEqual([
      { kind: 'ConfigMap', name: 'settings', namespace: 'shop', owner: { release: 'billing', namespace: 'shop' } },
    ]);
    expect(r.calls).toEqual([
      'stage checking who owns existing objects',
      'read live objects',
      'warn --take-ownership always: taking ConfigMap settings in namespace shop (release billing in namespace shop) over for release shop; from now on uninstalling shop deletes it, and release billing no longer owns it',
      'info adopting Service web in namespace shop: no release owns it (--take-ownership always)',
    ]);
  });
});
