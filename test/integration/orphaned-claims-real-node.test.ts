// A StatefulSet renamed by the new chart version (a database chart's major release), where a
// kubelet really runs the pod (DESIGN.md 6b): its claim holds a file the first pod wrote. The
// upgrade is refused before any change (the claim, its file and the pod as they were; plan shows
// the data at risk); with the chart's existing-claim value the renamed StatefulSet mounts the old
// claim and its new pod reads the file; with --orphaned-claims allow the upgrade goes in and the
// old claim still exists. On helm 4 and helm 3.
import { describe, expect, inject, it } from 'vitest';
import { getJson, kubectl, waitFor } from '../cluster/kube.js';
import { REAL_NODE_NAME } from '../cluster/real-node.js';
import { helm3, helm4, runCli } from '../helpers.js';
import { history, install, kubeconfig, namespacesDeletedAfterAll } from './cluster-helpers.js';
import { markerDatabase, markerLog as logsOf } from './pvc-marker.js';

const registry = inject('registry');
const newNamespace = namespacesDeletedAfterAll();
const opts = (ns: string) => ({ kubeconfig: kubeconfig(), namespace: ns });

const claimOf = async (ns: string, name: string) => {
  const pvc = await getJson(['get', 'pvc', name], opts(ns));
  return [pvc.metadata.uid, pvc.status.phase, pvc.spec.volumeName];
};

describe.concurrent('a StatefulSet renamed by the new chart version, on the real node', { timeout: 600_000 }, () => {
  for (const [name, bin] of [
    ['helm4', helm4],
    ['helm3', helm3],
  ] as const) {
    it(`${name}: refused with the claim and its file intact; the existing-claim value reuses it; allow upgrades and leaves it`, async () => {
      const ns = await newNamespace(`claims-${name}`);
      const { token, base } = await markerDatabase(registry, ['--helm-bin', bin]);
      const first = await install('db', ns, base);
      expect(first.exitCode, first.stderr).toBe(0);
      expect((await getJson(['get', 'pod', 'db-0'], opts(ns))).spec.nodeName).toBe(REAL_NODE_NAME);
      expect(await logsOf(ns, 'db-0', /wrote: /)).toBe(`wrote: written-by-v1-${token}\n`);
      const claim = await claimOf(ns, 'data-db-0');
      const pod = (await getJson(['get', 'pod', 'db-0'], opts(ns))).metadata.uid;
      const renamed = [...base, '--set', 'dbName=db-main'];
      const atRisk = `StatefulSet db in namespace ${ns} is deleted or renamed by the new chart version; no workload of the new version mounts its claims, which hold data: data-db-0`;

      const planned = await runCli(['plan', '--release', 'db', '--namespace', ns, ...renamed], {
        env: { KUBECONFIG: kubeconfig() },
      });
      expect(planned.exitCode, planned.stderr).toBe(10);
      expect(planned.stdout).toContain(
        `Data at risk (claims that hold data and that no workload of the new version mounts):\n    ${atRisk}\n    install refuses this upgrade before any change (exit 3; --orphaned-claims refuse)`,
      );

      const refused = await install('db', ns, renamed);
      expect(refused.exitCode, refused.stdout + refused.stderr).toBe(3);
      expect(refused.stderr).toContain(atRisk);
      expect(refused.stderr).toContain('persistence.existingClaim=data-db-0');
      expect(refused.stderr).toContain('--orphaned-claims allow (HELM_INSTALLER_ORPHANED_CLAIMS=allow)');
      // Nothing changed: the release, the StatefulSet and its pod, the claim; the file is read back by a new pod on the same claim.
      expect((await history('db', ns, bin)).map((r) => r.status)).toEqual(['deployed']);
      expect((await getJson(['get', 'pod', 'db-0'], opts(ns))).metadata.uid).toBe(pod);
      expect(await claimOf(ns, 'data-db-0')).toEqual(claim);
      await kubectl(['delete', 'pod', 'db-0', '--wait=true'], opts(ns));
      await waitFor(
        'db-0 back',
        async () => (await getJson(['get', 'pod', 'db-0'], opts(ns)).catch(() => undefined))?.metadata?.uid !== pod,
        { timeoutMs: 60_000 },
      );
      expect(await logsOf(ns, 'db-0', /found: /)).toBe(`found: written-by-v1-${token}\n`);

      // The way out the chart's notes give: the renamed StatefulSet mounts the old claim; its pod reads the file.
      const reused = await install('db', ns, [...renamed, '--set', 'existingClaim=data-db-0']);
      expect(reused.exitCode, reused.stdout + reused.stderr).toBe(0);
      expect(await logsOf(ns, 'db-main-0', /found: /)).toBe(`found: written-by-v1-${token}\n`);
      expect(await claimOf(ns, 'data-db-0')).toEqual(claim);
    });
  }

  it('helm4: --orphaned-claims allow upgrades, and the old claim is still there', async () => {
    const ns = await newNamespace('claims-allow');
    const { token, base } = await markerDatabase(registry);
    expect((await install('db', ns, base)).exitCode).toBe(0);
    expect(await logsOf(ns, 'db-0', /wrote: /)).toBe(`wrote: written-by-v1-${token}\n`);
    const claim = await claimOf(ns, 'data-db-0');
    const allowed = await install('db', ns, [...base, '--set', 'dbName=db-main'], {
      HELM_INSTALLER_ORPHANED_CLAIMS: 'allow',
    });
    expect(allowed.exitCode, allowed.stdout + allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain(
      'no workload of the new version mounts its claims, which hold data: data-db-0; they stay as they are (--orphaned-claims allow)',
    );
    expect((await history('db', ns)).map((r) => r.status)).toEqual(['superseded', 'deployed']);
    // The new StatefulSet starts on a new, empty claim; the old one stays with its volume.
    expect(await logsOf(ns, 'db-main-0', /wrote: /)).toBe(`wrote: written-by-v1-${token}\n`);
    expect(await claimOf(ns, 'data-db-0')).toEqual(claim);
  });
});
