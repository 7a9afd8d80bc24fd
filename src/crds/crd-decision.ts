// What happens to each CRD of the chart before helm upgrades, pure: the CRD as the chart has it
// against the live one. Helm installs crds/ once and never again; the policy (--crds) says
// whether the installer creates or updates them. For crds/ and templates alike, an update that
// drops a version the API server still has objects stored in (status.storedVersions) is refused
// by the API server and leaves the release failed on every redeploy: it is migrated first, through
// an intermediate CRD (bridged.ts) that serves both the dropped versions and the new storage one,
// so the objects can be written in the new storage version (migrate-storage.ts).
import { differences } from '../drift/compare-objects.js';
import { sameJson } from '../drift/managed-fields.js';
import { type ChartCrd, crdVersions, type Obj, storedVersions } from './chart-crds.js';
import { crdChanges, type CrdChanges } from './crd-changes.js';

/** What happens to the CRDs in the chart's crds/ folders before helm upgrades (helm itself never updates them). */
export type CrdPolicy = 'create-replace' | 'create' | 'skip';

export interface StorageMigration {
  /** The version every object is rewritten in: the new CRD's storage version. */
  storage: string;
  /** The live CRD's storage version now (what objects are written in until the intermediate CRD). */
  from: string | undefined;
  /** Stored versions the new CRD drops. */
  drop: string[];
  /** status.storedVersions once every object is rewritten. */
  keep: string[];
}

export interface CrdDecision {
  name: string;
  origin: ChartCrd['origin'];
  /** What the installer applies before helm (crds/ only; helm applies the templates' own). */
  apply: 'create' | 'update' | 'none';
  /** A templates CRD that exists with no release owning it (it came from crds/ before): made this release's. */
  adopt: boolean;
  migrate?: StorageMigration;
  /** Why this CRD cannot be upgraded (exit 3, before anything changes). */
  refused?: string;
  /** What the update changes, for the plan and the log; undefined for a new CRD. */
  changes?: CrdChanges;
}

export interface Release {
  name: string;
  namespace: string;
}

export function decideCrd(
  crd: Omit<ChartCrd, 'digest'>,
  live: Obj | undefined,
  policy: CrdPolicy,
  release: Release,
): CrdDecision {
  const base = { name: crd.name, origin: crd.origin, adopt: false } as const;
  if (!live) return { ...base, apply: crd.origin === 'crds' && policy !== 'skip' ? 'create' : 'none' };
  const changes = crdChanges(live, crd.body);
  const differs = specDiffers(crd.body, live);
  // A crds/ CRD changes only under create-replace; a templates one whenever helm upgrades.
  const changing = crd.origin === 'templates' || (policy === 'create-replace' && differs);
  const adopt = crd.origin === 'templates' && !ownedByARelease(live);
  // A templates CRD is helm's to apply, but helm 3 applies it and the custom resources that need
  // its new fields in one go, and the API server prunes those fields (its schema is not updated
  // yet): it is applied first too, as helm would (its field manager), when it is this release's.
  const helms = crd.origin === 'templates' && (adopt || ownedBy(live, release));
  const apply = changing && differs && (crd.origin === 'crds' || helms) ? 'update' : 'none';
  const decision: CrdDecision = { ...base, apply, adopt, changes };
  if (!changing) return decision;
  const stored = storedVersions(live);
  const wanted = new Set(crdVersions(crd.body).map((v) => v.name));
  const drop = stored.filter((v) => !wanted.has(v));
  if (drop.length === 0) return decision;
  // Another release's templates CRD: the installer applies no intermediate CRD for it; helm's
  // own upgrade refuses to take it over and says so.
  if (apply === 'none') return decision;
  const storage = crdVersions(crd.body).find((v) => v.storage)?.name;
  if (!storage)
    return {
      ...decision,
      refused: `CRD ${crd.name} (${crd.source}): no version is marked storage: true; the vendor must fix the chart's CRD. Release ${release.name} was left as it was.`,
    };
  const from = crdVersions(live).find((v) => v.storage)?.name;
  return {
    ...decision,
    migrate: { storage, from, drop, keep: [...new Set([...stored.filter((v) => wanted.has(v)), storage])] },
  };
}

/**
 * Whether applying the chart's CRD would change the live one: a field the chart sets that the
 * live CRD has otherwise, or a field the live CRD has that the chart's no longer sets (a version,
 * a schema property), which a one-way comparison would miss. The API server's own default
 * (conversion strategy None) is not a difference.
 */
export function specDiffers(desired: Obj, live: Obj): boolean {
  const want = (desired.spec ?? {}) as Obj;
  // A shallow copy is enough to leave the default out: a CRD's spec is 200 KB and more, and a
  // deep copy and a field-by-field comparison both ways cost 30 ms a CRD; one deep equality
  // (sameJson: the same keys, the same values, lists item by item) says the same, and stops at
  // the first difference.
  const have = { ...((live.spec ?? {}) as Obj) };
  const conversion = have.conversion as { strategy?: unknown } | undefined;
  if (!want.conversion && conversion?.strategy === 'None' && Object.keys(conversion).length === 1)
    delete have.conversion;
  return !sameJson(want, have) || labelsDiffer(desired, live);
}

function labelsDiffer(desired: Obj, live: Obj): boolean {
  const meta = (o: Obj) => (o.metadata ?? {}) as { labels?: Obj; annotations?: Obj };
  const d = meta(desired);
  const l = meta(live);
  return (
    differences(
      { labels: d.labels ?? {}, annotations: d.annotations ?? {} },
      { labels: l.labels ?? {}, annotations: l.annotations ?? {} },
      [],
      { onlySet: true },
    ).length > 0
  );
}

const RELEASE_NAME = 'meta.helm.sh/release-name';

function ownedByARelease(live: Obj): boolean {
  const annotations = ((live.metadata ?? {}) as { annotations?: Record<string, unknown> }).annotations ?? {};
  return typeof annotations[RELEASE_NAME] === 'string' && annotations[RELEASE_NAME] !== '';
}

function ownedBy(live: Obj, release: Release): boolean {
  const annotations = ((live.metadata ?? {}) as { annotations?: Record<string, unknown> }).annotations ?? {};
  return (
    annotations[RELEASE_NAME] === release.name && annotations['meta.helm.sh/release-namespace'] === release.namespace
  );
}
