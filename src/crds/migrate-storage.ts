// A storage migration, as kube-storage-version-migrator does it, in the new storage version: once
// the intermediate CRD (bridged.ts) makes it the storage version while the dropped ones are still
// served, every custom resource of the kind is read and written back in it unchanged, which makes
// the API server store it there; then the versions no object is stored in any more are dropped
// from the CRD's status.storedVersions, so the chart's CRD may drop them. Before any write, a
// server-side dry run of every write shows what the API server would prune; one field pruned and
// nothing is written (the survey below refused the same case before any change, from the schema).
// Interrupted at any point, it is simply done again by the next run: each write is a no-op
// update, and storedVersions is set only once every object was written. A dropped version no
// object is stored in is pruned from storedVersions the same way, with no write.
import type { ObjectClient } from '../cluster/object-client.js';
import { ObjectApiError } from '../cluster/object-client.js';
import { crdNames, crdVersions, type Obj } from './chart-crds.js';
import type { StorageMigration } from './crd-decision.js';
import { INSTALLER_FIELD_MANAGER } from './field-owners.js';
import { prunedFields, removedPaths, versionSchema } from './pruned-fields.js';

export const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const PAGE = '500';

/** An object whose rewrite would lose fields: `ns/name` and the field paths. */
export interface PrunedObject {
  object: string;
  fields: string[];
}

/** What a migration will do, read before any change: how many objects, and which would lose fields. */
export interface MigrationSurvey {
  objects: number;
  pruned: PrunedObject[];
}

/**
 * Reads every object of the live CRD's kind (in the new storage version when the live CRD serves
 * it, else in one it serves) and checks it against the new CRD's schema of that version. With a
 * conversion webhook the fields of another version say nothing: only the count is given, and the
 * dry runs of the migration itself decide.
 */
export async function surveyMigration(
  client: ObjectClient,
  live: Obj,
  desired: Obj,
  m: StorageMigration,
  signal?: AbortSignal,
): Promise<MigrationSurvey> {
  const served = crdVersions(live)
    .filter((v) => v.served)
    .map((v) => v.name);
  const version = served.includes(m.storage) ? m.storage : m.from && served.includes(m.from) ? m.from : served[0];
  if (!version) return { objects: 0, pruned: [] };
  const webhook = ((desired.spec ?? {}) as { conversion?: { strategy?: string } }).conversion?.strategy === 'Webhook';
  const schema = webhook && version !== m.storage ? undefined : versionSchema(desired, m.storage);
  let objects = 0;
  const pruned: PrunedObject[] = [];
  await eachObject(client, live, version, signal, (item) => {
    objects++;
    const fields = prunedFields(item, schema);
    if (fields.length > 0) pruned.push({ object: objectName(item), fields });
  });
  return { objects, pruned };
}

/**
 * Under the intermediate CRD: every object dry-run written in the new storage version; none
 * pruned, each written; then storedVersions trimmed. Returns how many objects there were, or the
 * objects the dry runs prune (nothing written).
 */
export async function migrateStorage(
  client: ObjectClient,
  crd: Obj,
  m: StorageMigration,
  signal?: AbortSignal,
): Promise<{ objects: number } | { pruned: PrunedObject[] }> {
  const { group, plural, kind } = crdNames(crd);
  const apiVersion = `${group}/${m.storage}`;
  const items: Obj[] = [];
  await eachObject(client, crd, m.storage, signal, (item) => void items.push({ ...item, apiVersion, kind }));
  const pruned: PrunedObject[] = [];
  for (const item of items) {
    signal?.throwIfAborted();
    const after = await write(client, item, plural, true);
    const fields = after ? removedPaths(withoutMetadata(item), withoutMetadata(after)) : [];
    if (fields.length > 0) pruned.push({ object: objectName(item), fields });
  }
  if (pruned.length > 0) return { pruned };
  for (const item of items) {
    signal?.throwIfAborted();
    await write(client, item, plural, false);
  }
  const name = String((crd.metadata as Obj).name);
  await client.mergePatch(
    `${CRD_PATH}/${encodeURIComponent(name)}/status`,
    { status: { storedVersions: m.keep } },
    INSTALLER_FIELD_MANAGER,
  );
  return { objects: items.length };
}

async function eachObject(
  client: ObjectClient,
  crd: Obj,
  version: string,
  signal: AbortSignal | undefined,
  each: (item: Obj) => void,
): Promise<void> {
  const { group, plural } = crdNames(crd);
  let next: string | undefined;
  do {
    signal?.throwIfAborted();
    const page = await client.list(`/apis/${group}/${version}/${plural}`, {
      limit: PAGE,
      ...(next ? { continue: next } : {}),
    });
    for (const item of (page.items ?? []) as Obj[]) each(item);
    next = ((page.metadata ?? {}) as { continue?: string }).continue || undefined;
  } while (next);
}

/** The object as the server stores it (dry run), or written; undefined when someone else wrote it since (so it is stored in the new version already) or it is gone. */
async function write(client: ObjectClient, object: Obj, plural: string, dryRun: boolean): Promise<Obj | undefined> {
  const meta = object.metadata as { name: string; namespace?: string };
  const scope = meta.namespace ? `/namespaces/${encodeURIComponent(meta.namespace)}` : '';
  try {
    return await client.update(
      `/apis/${String(object.apiVersion)}${scope}/${plural}/${encodeURIComponent(meta.name)}`,
      object,
      INSTALLER_FIELD_MANAGER,
      dryRun,
    );
  } catch (error) {
    if (error instanceof ObjectApiError && (error.code === 409 || error.code === 404)) return undefined;
    throw error;
  }
}

function withoutMetadata(o: Obj): Obj {
  const { metadata: _m, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

function objectName(o: Obj): string {
  const meta = (o.metadata ?? {}) as { name?: string; namespace?: string };
  return meta.namespace ? `${meta.namespace}/${meta.name}` : String(meta.name);
}

const NAMED = 10;

/** The refusal (exit 3) of a migration that would lose fields: the CRD, the objects and their fields. */
export function prunedRefusal(
  crd: { name: string; source: string },
  m: StorageMigration,
  pruned: PrunedObject[],
  release: string,
): string {
  const named = pruned.slice(0, NAMED).map((p) => `${p.object} (${p.fields.join(', ')})`);
  const more = pruned.length > NAMED ? `, and ${pruned.length - NAMED} more` : '';
  return (
    `CRD ${crd.name} (${crd.source}): the new chart drops version ${m.drop.join(', ')}, in which objects are still stored, ` +
    `and its storage version ${m.storage} has no place for fields these objects hold: ${named.join(', ')}${more}; rewriting them in ${m.storage} would lose those fields. ` +
    `The vendor must ship a chart version whose CRD keeps them in ${m.storage} (or still serves ${m.drop.join(', ')}), and this one after it. Release ${release} was left as it was.`
  );
}
