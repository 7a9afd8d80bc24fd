// What a plan installed, remembered between runs: a ConfigMap in the run's namespace listing the
// releases (and their dependencies) the last run of this app installed, and the app's revisions
// (app-revision.ts: which revision of each release each run left deployed). A release the plan no
// longer lists has no other trace in the plan, so the inventory is how the next run finds it to
// uninstall it, and the last good app revision is what a failed run goes back to. Ownership is proved by the release itself (its OWNER_LABEL), never by this list
// alone: a release someone else made under a listed name is left alone.
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus, toInstallerApiError } from '../cluster/kube-errors.js';
import { objectClient } from '../cluster/object-client.js';
import { APP_SLUG_ANNOTATION } from '../common/app-slug.js';
import type { AppRevision } from './app-revision.js';

/** The release label (helm --labels) naming the app whose installer made the release. */
export const OWNER_LABEL = 'helm-installer.io/app';

export interface InventoryEntry {
  namespace: string;
  name: string;
  /** Keys (`namespace/name`) of the releases it depended on: dependents are removed first. */
  deps: string[];
}

export function inventoryName(app: string): string {
  return `helm-installer-${app}-releases`.slice(0, 253);
}

export interface Inventory {
  releases: InventoryEntry[];
  /** Oldest first. */
  revisions: AppRevision[];
}

export async function readInventory(kube: KubeClients, namespace: string, app: string): Promise<Inventory> {
  try {
    const cm = await kube.core.readNamespacedConfigMap({ name: inventoryName(app), namespace });
    return {
      releases: jsonList(cm.data?.releases).filter(isEntry),
      revisions: jsonList(cm.data?.appRevisions).filter(isRevision),
    };
  } catch (error) {
    if (apiStatus(error) === 404) return { releases: [], revisions: [] };
    throw toInstallerApiError(error, `reading the release inventory ${namespace}/${inventoryName(app)}`, kube.server);
  }
}

/** A list written by an earlier run; anything else (edited by hand, cut) reads as none. */
function jsonList(text: string | undefined): unknown[] {
  try {
    const parsed = JSON.parse(text ?? '[]') as unknown;
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** A server-side apply: creates or updates with the Role's create and patch (it has no update). */
export async function writeInventory(
  kube: KubeClients,
  namespace: string,
  app: string,
  inventory: Inventory,
  appSlug?: string,
): Promise<void> {
  const data = { releases: JSON.stringify(inventory.releases), appRevisions: JSON.stringify(inventory.revisions) };
  await applyAppConfigMap(kube, {
    namespace,
    name: inventoryName(app),
    app,
    data,
    appSlug,
    what: 'the release inventory',
  });
}

/**
 * One of the app's own ConfigMaps (the inventory, the last run's outcome), applied server-side:
 * created or updated with the Role's create and patch (it has no update), labelled with the app,
 * and annotated with the KOTS app slug so that `kubectl kots remove --undeploy` removes it with the
 * app, as every object we apply is.
 */
export async function applyAppConfigMap(
  kube: KubeClients,
  c: {
    namespace: string;
    name: string;
    app: string;
    data: Record<string, string>;
    appSlug?: string;
    what: string;
    signal?: AbortSignal;
  },
): Promise<void> {
  const { namespace, name, app, appSlug } = c;
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace,
      labels: { [OWNER_LABEL]: app, 'app.kubernetes.io/managed-by': 'helm-installer' },
      ...(appSlug !== undefined ? { annotations: { [APP_SLUG_ANNOTATION]: appSlug } } : {}),
    },
    data: c.data,
  };
  try {
    await (
      await objectClient(kube, c.signal)
    ).apply(`/api/v1/namespaces/${namespace}/configmaps/${name}`, body, {
      fieldManager: 'helm-installer',
      dryRun: false,
    });
  } catch (error) {
    throw toInstallerApiError(error, `writing ${c.what} ${namespace}/${name}`, kube.server);
  }
}

function isRevision(r: unknown): r is AppRevision {
  const o = r as AppRevision;
  return typeof o?.revision === 'number' && typeof o.status === 'string' && Array.isArray(o.releases);
}

function isEntry(e: unknown): e is InventoryEntry {
  const o = e as InventoryEntry;
  return typeof o?.namespace === 'string' && typeof o.name === 'string' && Array.isArray(o.deps);
}

/**
 * Pure: the inventory's releases that the plan no longer installs, dependents before their
 * dependencies (an app's part goes before the operator or database it ran on).
 */
export function pruneOrder(inventory: InventoryEntry[], keep: Set<string>): InventoryEntry[] {
  const gone = inventory.filter((e) => !keep.has(`${e.namespace}/${e.name}`));
  const order: InventoryEntry[] = [];
  const placed = new Set<string>();
  const key = (e: InventoryEntry) => `${e.namespace}/${e.name}`;
  // A release goes once nothing still to go depends on it.
  while (order.length < gone.length) {
    const next =
      gone.find(
        (e) => !placed.has(key(e)) && gone.every((o) => placed.has(key(o)) || o === e || !o.deps.includes(key(e))),
      ) ?? gone.find((e) => !placed.has(key(e)))!;
    placed.add(key(next));
    order.push(next);
  }
  return order;
}

/**
 * Pure: what the inventory lists after a run with a failure (nothing pruned): the plan's releases
 * (`installed`), then what it dropped, to be uninstalled by the next good run. A release the plan
 * names but someone else made (`notOurs`), which no earlier run listed, is left out: the app never
 * had it, so it is never the app's to prune either.
 */
export function listedAfterFailure(
  installed: InventoryEntry[],
  previous: InventoryEntry[],
  notOurs: ReadonlySet<string>,
): InventoryEntry[] {
  const key = (e: InventoryEntry) => `${e.namespace}/${e.name}`;
  const before = new Set(previous.map(key));
  const dropped = pruneOrder(previous, new Set(installed.map(key)));
  return [...installed.filter((e) => before.has(key(e)) || !notOurs.has(key(e))), ...dropped];
}
