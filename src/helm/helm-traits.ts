// What this helm does, helm 3 and helm 4 told apart in one place (DESIGN.md section 4): every
// other file asks these traits, never the major version, so supporting another helm is one row.

export interface HelmTraits {
  /**
   * How a post-renderer is given: helm 3 runs an executable path (`--post-renderer PATH`);
   * helm 4 takes the name of a `postrenderer/v1` plugin found under `$HELM_PLUGINS`.
   */
  postRenderer: 'executable' | 'plugin';
  /** Whether helm sends hooks through the post-renderer: helm 4 does, helm 3 never did. */
  postRendersHooks: boolean;
  /** How upgrade, rollback and uninstall wait: helm 4's kstatus watcher names each unready object. */
  waitArgs: readonly string[];
  /** What an upgrade adds so that a failure is rolled back (helm 3's --atomic implies --wait). */
  rollbackOnFailureArgs: readonly string[];
  /**
   * How objects are applied. Helm 4 applies server-side, always: `--server-side=true`, not
   * helm's default `auto`, which keeps a release that helm 3 (or KOTS, or any earlier tool)
   * applied client-side on client-side apply for good, where `--force-conflicts` is refused
   * (`forceConflicts enabled when serverSideApply disabled`) and a field a later chart drops is
   * never removed. With `true` helm moves the objects' field ownership to server-side apply
   * (HIP-0023, client-go's csaupgrade). Then a field someone else set since (`kubectl set
   * image`, `kubectl edit`, or kubectl's own manager on objects adopted with --take-ownership)
   * would be a conflict that fails the upgrade and its rollback alike, on every later run: the
   * release's own fields win, as they do with helm 3's three-way merge and in Flux's drift
   * correction; fields that something else owns for good are kept by the drift ignore rules
   * (see reconcile/drift-options.ts). Helm 3 has only its client-side three-way merge.
   */
  applyArgs: readonly string[];
}

const HELM_4: HelmTraits = {
  postRenderer: 'plugin',
  postRendersHooks: true,
  waitArgs: ['--wait=watcher'],
  rollbackOnFailureArgs: ['--wait=watcher', '--rollback-on-failure'],
  applyArgs: ['--server-side=true', '--force-conflicts'],
};

const HELM_3: HelmTraits = {
  postRenderer: 'executable',
  postRendersHooks: false,
  waitArgs: ['--wait'],
  rollbackOnFailureArgs: ['--wait', '--atomic'],
  applyArgs: [],
};

/** The traits of a helm of this major version. */
export function helmTraits(major: 3 | 4): HelmTraits {
  return major === 4 ? HELM_4 : HELM_3;
}
