// After a CRD is created or updated, the API server takes a moment to serve it: Established,
// then each served version listed by discovery. Helm starts right after this step and reads
// discovery once, so a custom resource of a version not served yet would fail its upgrade.
import type { ObjectClient } from '../cluster/object-client.js';
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import { type ChartCrd, crdNames, crdVersions, type Obj } from './chart-crds.js';
import { CRD_PATH } from './migrate-storage.js';

const BOUND_MS = 60_000;
const POLL_MS = 100;

/**
 * `applied`: what each apply answered (the CRD as the API server holds it then, status included),
 * so a CRD already Established is not read back (a CRD of operators' size is 200 KB).
 */
export async function waitServed(
  client: ObjectClient,
  crds: readonly ChartCrd[],
  signal?: AbortSignal,
  boundMs = BOUND_MS,
  applied: ReadonlyMap<string, Obj> = new Map(),
): Promise<void> {
  const deadline = Date.now() + boundMs;
  await Promise.all(
    crds.map(async (crd) => {
      const { group, plural } = crdNames(crd.body);
      const versions = crdVersions(crd.body)
        .filter((v) => v.served)
        .map((v) => v.name);
      let known = applied.get(crd.name);
      while (!(await served(client, crd.name, group, plural, versions, known))) {
        known = undefined;
        signal?.throwIfAborted();
        if (Date.now() > deadline) {
          throw new InstallerError(
            ExitCode.transient,
            `CRD ${crd.name} was not established and served (${versions.join(', ')}) within ${boundMs / 1000}s`,
            {
              hint: 'Look at the CRD (kubectl describe crd ' + crd.name + '), then run again.',
            },
          );
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    }),
  );
}

async function served(
  client: ObjectClient,
  name: string,
  group: string,
  plural: string,
  versions: string[],
  known?: Obj,
): Promise<boolean> {
  const live = known ?? (await client.get(`${CRD_PATH}/${encodeURIComponent(name)}`));
  const conditions = ((live?.status ?? {}) as { conditions?: { type?: string; status?: string }[] }).conditions ?? [];
  if (!conditions.some((c) => c.type === 'Established' && c.status === 'True')) return false;
  for (const version of versions) {
    const list = (await client.get(`/apis/${group}/${version}`)) as
      (Obj & { resources?: { name?: string }[] }) | undefined;
    if (!list?.resources?.some((r) => r.name === plural)) return false;
  }
  return true;
}
