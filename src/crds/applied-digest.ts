// Whether a crds/ CRD is still as the installer last applied it, told from its metadata alone, so
// an upgrade that changes no CRD neither reads ten CRDs of 200 KB nor compares them (pure).
//
// Every CRD the installer applies as the chart has it carries the chart CRD's digest (ChartCrd's:
// the sha256 of the rendered text it was read from, so no reading is needed to tell it), in an
// annotation of its own. The live CRD is the chart's CRD untouched when both hold:
// - the annotation is the digest of the chart's CRD now (the chart's CRD did not change), and
// - the installer's server-side apply is the only writer of the CRD's main resource
//   (managedFields): any other writer, a hand edit (`kubectl edit`, `kubectl apply`, `kubectl
//   patch`: each leaves an entry of its manager), helm, another tool or a controller setting a
//   field, makes the CRD one to read and compare whole, as every run did before. A write that
//   clears managedFields clears the installer's entry too. (Only a writer that uses the
//   installer's own field manager name could pass; none does.)
// An intermediate CRD (bridged.ts) is applied without the annotation, so it is never taken for the
// chart's. A CRD found equal to the chart's without the mark (helm or an earlier version applied it)
// is applied once, unchanged, to record it (recordsDigest).
import type { ChartCrd, Obj } from './chart-crds.js';
import { INSTALLER_FIELD_MANAGER, isPreviousInstaller, type ManagedFieldsEntry } from './field-owners.js';

export const DIGEST_ANNOTATION = 'helm-installer/applied-crd-digest';

/** The chart's CRD with its digest annotated: what the installer applies. */
export function withDigest(crd: Pick<ChartCrd, 'body' | 'digest'>): Obj {
  const meta = (crd.body.metadata ?? {}) as { annotations?: Obj };
  return {
    ...crd.body,
    metadata: { ...meta, annotations: { ...meta.annotations, [DIGEST_ANNOTATION]: crd.digest } },
  };
}

/**
 * Pure: whether a CRD found equal to the chart's but not marked as applied (no digest, or another
 * installer's entry: helm 4's own install applies crds/ again, as its field manager `helm`) is
 * applied once more, unchanged, to record it: the apply takes the other installers' fields over
 * (field-owners.ts), and later runs need not read it. Not when another kind of writer holds
 * fields (a controller): the apply would leave its entry, and every run would write again.
 */
export function recordsDigest(metadata: Obj, digest: string): boolean {
  if (unchangedSinceApplied(metadata, digest)) return false;
  return mainWriters(metadata).every((e) => isPreviousInstaller(e.manager));
}

function mainWriters(metadata: Obj): ManagedFieldsEntry[] {
  return ((metadata.managedFields ?? []) as ManagedFieldsEntry[]).filter((e) => !e.subresource);
}

/** `metadata`: the live CRD's (a metadata-only read); `digest`: the chart's CRD's (ChartCrd). */
export function unchangedSinceApplied(metadata: Obj, digest: string): boolean {
  const annotations = (metadata.annotations ?? {}) as Record<string, unknown>;
  if (annotations[DIGEST_ANNOTATION] !== digest) return false;
  const writers = mainWriters(metadata);
  return writers.length === 1 && writers[0]!.manager === INSTALLER_FIELD_MANAGER && writers[0]!.operation === 'Apply';
}
