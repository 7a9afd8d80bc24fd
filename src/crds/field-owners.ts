// The fields of a CRD that whoever installed it before owns, made the installer's, pure: what
// client-go's csaupgrade does when a client-side applied object moves to server-side apply. A CRD
// from crds/ was created by helm (manager `helm`, operation Update), or applied by hand as the
// charts' upgrade notes say (`kubectl apply [--server-side] -f crds/`). A server-side apply
// removes only fields its own manager owned and no longer sets: without this, a version or a
// schema field the new chart drops would stay. Managers that are controllers (a CA injector
// writing a webhook's caBundle) keep their fields.
import type { Obj } from './chart-crds.js';

export const INSTALLER_FIELD_MANAGER = 'helm-installer';

/** Who put the CRD there before: helm itself, kubectl by hand, the installer's own updates. */
const PREVIOUS_INSTALLERS = new Set([
  'helm',
  'helm-controller',
  'kubectl',
  'kubectl-client-side-apply',
  'kubectl-create',
  'kubectl-replace',
  'kubectl-edit',
  INSTALLER_FIELD_MANAGER,
]);

/** Whether a field manager is one whose fields the installer takes over (takeOverFields). */
export function isPreviousInstaller(manager: string | undefined): boolean {
  return PREVIOUS_INSTALLERS.has(manager ?? '');
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: Obj;
  time?: string;
  subresource?: string;
}

/**
 * The managedFields with every previous installer's entries (of the main resource) merged into one
 * Apply entry of the installer's manager; undefined when there is nothing to take over (already
 * the installer's apply alone).
 */
export function takeOverFields(
  managedFields: readonly ManagedFieldsEntry[],
  apiVersion: string,
): ManagedFieldsEntry[] | undefined {
  const taken = managedFields.filter(
    (e) =>
      !e.subresource &&
      PREVIOUS_INSTALLERS.has(e.manager ?? '') &&
      !(e.manager === INSTALLER_FIELD_MANAGER && e.operation === 'Apply'),
  );
  if (taken.length === 0) return undefined;
  const own = managedFields.find(
    (e) => !e.subresource && e.manager === INSTALLER_FIELD_MANAGER && e.operation === 'Apply',
  );
  const fields = [own, ...taken].reduce<Obj>((all, e) => mergeFieldSets(all, e?.fieldsV1 ?? {}), {});
  const kept = managedFields.filter((e) => e !== own && !taken.includes(e));
  return [
    ...kept,
    {
      manager: INSTALLER_FIELD_MANAGER,
      operation: 'Apply',
      apiVersion,
      fieldsType: 'FieldsV1',
      fieldsV1: fields,
      time: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    },
  ];
}

/** The union of two FieldsV1 sets (trees of `f:name`, `k:{...}`, `v:...` and `.` keys; leaves are {}). */
export function mergeFieldSets(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const mine = out[key];
    out[key] = isMap(mine) && isMap(value) ? mergeFieldSets(mine, value) : value;
  }
  return out;
}

function isMap(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
