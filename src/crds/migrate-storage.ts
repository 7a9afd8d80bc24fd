// A storage migration, as kube-storage-version-migrator does it: every custom resource of the
// kind is read and written back unchanged, which makes the API server store it in the CRD's
// current storage version (an object already stored in it is not written again), then the
// versions no object is stored in any more are dropped from the CRD's status.storedVersions, so
// the new CRD may drop them. Interrupted at any point, it is simply done again by the next run:
// each write is a no-op update, and storedVersions is set only once every object was written.
import type { ObjectClient } from '../cluster/object-client.js';
import { ObjectApiError } from '../cluster/object-client.js';
import { crdNames, type Obj } from './chart-crds.js';
import type { StorageMigration } from './crd-decision.js';
import { INSTALLER_FIELD_MANAGER } from './field-owners.js';

export const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const PAGE = '500';

/** Rewrites every object of the live CRD's kind; returns how many there were. */
export async function migrateStorage(client: ObjectClient, live: Obj, m: StorageMigration, signal?: AbortSignal): Promise<number> {
  const { group, plural, kind } = crdNames(live);
  const apiVersion = `${group}/${m.storage}`;
  let count = 0;
  let next: string | undefined;
  do {
    signal?.throwIfAborted();
    const page = await client.list(`/apis/${apiVersion}/${plural}`, { limit: PAGE, ...(next ? { continue: next } : {}) });
    for (const item of (page.items ?? []) as Obj[]) {
      await rewrite(client, { ...item, apiVersion, kind }, `/apis/${apiVersion}`, plural);
      count++;
    }
    next = ((page.metadata ?? {}) as { continue?: string }).continue || undefined;
  } while (next);
  const name = String((live.metadata as Obj).name);
  await client.mergePatch(`${CRD_PATH}/${encodeURIComponent(name)}/status`, { status: { storedVersions: m.keep } }, INSTALLER_FIELD_MANAGER);
  return count;
}

async function rewrite(client: ObjectClient, object: Obj, base: string, plural: string): Promise<void> {
  const meta = object.metadata as { name: string; namespace?: string };
  const scope = meta.namespace ? `/namespaces/${encodeURIComponent(meta.namespace)}` : '';
  try {
    await client.update(`${base}${scope}/${plural}/${encodeURIComponent(meta.name)}`, object, INSTALLER_FIELD_MANAGER);
  } catch (error) {
    // Written by someone else since it was listed (so stored in the current version already), or gone.
    if (error instanceof ObjectApiError && (error.code === 409 || error.code === 404)) return;
    throw error;
  }
}
