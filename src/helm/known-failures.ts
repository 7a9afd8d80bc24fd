// Helm's failures that every later run repeats until someone acts, pure: each recognised by
// helm's (or the API server's) own words, with what it means and the way out. Without them the
// summary said "Fix the cause above, then run again" and that the next run upgrades again, which
// for these it does not.
import { ExitCode } from '../common/exit-codes.js';

export interface KnownFailure {
  name: string;
  match: RegExp;
  /** 3: the chart or values must change; 4: the cluster's state must change. */
  exitCode: typeof ExitCode.invalidInput | typeof ExitCode.helmFailed;
  /** What it means, in one line after helm's own. */
  meaning: string;
  hint: string;
}

const KNOWN_FAILURES: readonly KnownFailure[] = [
  {
    // Helm builds the objects of the release's current record before an upgrade or a rollback;
    // "no matches for kind ... in version ..." there is the cluster's doing, not the values'.
    name: 'removed API in the stored record',
    match:
      /(?:unable to build kubernetes objects from current release manifest|current release manifest contains removed kubernetes api)/,
    exitCode: ExitCode.helmFailed,
    meaning:
      "The release's stored record names an API version this cluster no longer serves (the cluster was upgraded since it was written); no value is at fault, and every run fails the same way until the record changes.",
    hint: 'The installer maps the removed APIs of its table in the record before helm (README, Removed APIs); this one is not in it (a custom resource whose CRD dropped the version?): rewrite the record with helm mapkubeapis, or serve the version again, then run again.',
  },
  {
    // A rollback builds its target's record the same way ("new release manifest"); an upgrade's
    // render names such a kind only when its CRD is missing (the installer refuses a removed
    // built-in version of its table before helm).
    name: 'kind not served',
    match: /unable to build kubernetes objects from new release manifest[\s\S]*no matches for kind/,
    exitCode: ExitCode.helmFailed,
    meaning:
      'An object names a kind at an API version this cluster does not serve: for a rollback, the target revision was recorded before the cluster was upgraded; for an install or upgrade, a CRD the chart needs is not installed.',
    hint: 'For a rollback target recorded on an older cluster: map that revision with helm mapkubeapis (the installer maps the records an upgrade reads, README, Removed APIs). For a missing CRD: install the operator or CRDs the chart needs first, then run again.',
  },
  {
    name: 'stale CRD',
    match: /field not declared in schema|strict decoding error: unknown field/,
    exitCode: ExitCode.invalidInput,
    meaning:
      "A custom resource of the chart sets a field that its CRD in the cluster does not declare: the cluster's CRD is older than the chart's.",
    hint: "The installer updates the chart's crds/ CRDs before helm with --crds create-replace (the default; HELM_INSTALLER_CRDS): use it. If it was used, the chart's own CRD lacks the field: tell the vendor.",
  },
  {
    name: 'stored version dropped',
    match: /status\.storedVersions\[\d+\]: Invalid value: .*missing from spec\.versions/,
    exitCode: ExitCode.invalidInput,
    meaning: 'A CRD of the chart drops a version in which objects are still stored.',
    hint: 'The installer migrates the objects first when the new CRD keeps the version they are written in now (--crds create-replace); otherwise the vendor must ship a chart whose CRD still serves that version, for one release.',
  },
  {
    name: 'owned elsewhere',
    match: /exists and cannot be imported into the current release|invalid ownership metadata/,
    exitCode: ExitCode.helmFailed,
    meaning: 'An object of the chart already exists and another release owns it, or it was made without helm.',
    hint: 'If it should belong to this release: uninstall it from the release named above (or delete it), or run once with --take-ownership always (HELM_INSTALLER_TAKE_OWNERSHIP), which takes it even from another release.',
  },
  {
    name: 'immutable field',
    match: /field is immutable|updates to statefulset spec for fields other than/,
    exitCode: ExitCode.helmFailed,
    meaning:
      'The new chart version changes a field the API server never lets change (a selector, a StatefulSet serviceName or volumeClaimTemplates, a Job template).',
    hint: 'With --recreate-immutable auto (the default; HELM_INSTALLER_RECREATE_IMMUTABLE) the installer recreates such an object before helm, a StatefulSet keeping its PVCs; if it was on, the change was not recognised before helm: by hand, kubectl delete statefulset NAME --cascade=orphan (PVCs stay), then run again.',
  },
  {
    name: 'release too large',
    match:
      /[Rr]equest entity too large|Too long: must have at most 1048576 bytes|etcdserver: request is too large|exceeds the maximum/,
    exitCode: ExitCode.invalidInput,
    meaning:
      'The release record is too large: helm keeps each revision in one Secret of at most 1 MiB, and the API server refuses larger requests.',
    hint: 'A retry fails the same way. Split the chart into several releases (a release plan, releases.yaml), or make the chart inline fewer files (large ConfigMaps, dashboards, CRDs in templates).',
  },
  {
    name: 'client-side apply forced',
    match: /forceConflicts enabled when serverSideApply disabled/,
    exitCode: ExitCode.helmFailed,
    meaning: 'helm was asked for client-side apply together with --force-conflicts.',
    hint: 'Remove --server-side=false (or auto) from the helm arguments after -- (HELM_INSTALLER_HELM_ARGS): the installer applies server-side on helm 4.',
  },
];

export function knownFailure(stderr: string): KnownFailure | undefined {
  return KNOWN_FAILURES.find((f) => f.match.test(stderr));
}
