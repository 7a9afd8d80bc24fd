// A CRD update that drops versions, applied in two steps. Helm's upgrade first builds the objects
// of the release as it is deployed (its last manifest), and a custom resource there written in a
// version the CRD no longer serves fails the whole upgrade (`unable to build kubernetes objects
// from current release manifest: no matches for kind`); a failed upgrade's rollback needs that
// version too. And a version objects are still stored in (status.storedVersions) cannot leave
// spec.versions until every object is written again in the new storage version. So the CRD is
// first applied as an intermediate CRD: the chart's, with every version it drops that the live
// one serves or has objects stored in kept as served (never storage: new objects go to the
// chart's storage version), and as the chart has it once the objects are migrated and helm's
// upgrade succeeded. A run cut short between the two leaves the old versions served, which harms
// nothing; the next run applies the intermediate CRD again and goes on.
import { crdVersions, type Obj, storedVersions } from './chart-crds.js';

/**
 * On a crds/ CRD applied as an intermediate CRD, naming the release. The chart's CRD applied after
 * helm's upgrade has no such label, so the installer's own apply (its field manager owns the label)
 * takes it away: a CRD still wearing it is a migration whose last step did not run.
 */
export const BRIDGED_LABEL = 'helm-installer/crd-bridged';

/** Pure: the intermediate CRD `body` with the label naming the release that bridged it. */
export function withBridgedLabel(body: Obj, release: string): Obj {
  const metadata = (body.metadata ?? {}) as Obj;
  return {
    ...body,
    metadata: { ...metadata, labels: { ...((metadata.labels ?? {}) as Obj), [BRIDGED_LABEL]: release } },
  };
}

/** Pure: `desired` with the versions `live` serves or stores and `desired` lacks appended (served, not storage); `desired` itself when none. */
export function withDroppedVersions(desired: Obj, live: Obj): Obj {
  const kept = new Set(crdVersions(desired).map((v) => v.name));
  const stored = new Set(storedVersions(live));
  const liveVersions = ((live.spec ?? {}) as { versions?: Obj[] }).versions ?? [];
  const dropped = liveVersions.filter(
    (v) => typeof v.name === 'string' && !kept.has(v.name) && (v.served === true || stored.has(v.name)),
  );
  if (dropped.length === 0) return desired;
  const spec = (desired.spec ?? {}) as { versions?: Obj[] };
  return {
    ...desired,
    spec: {
      ...spec,
      versions: [...(spec.versions ?? []), ...dropped.map((v) => ({ ...v, served: true, storage: false }))],
    },
  };
}
