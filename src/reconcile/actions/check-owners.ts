// Action "owners", under the Lease and before any change (the CRD step is one): when helm is to
// adopt existing objects (--take-ownership first-install on a first install, or always), read who
// owns each object of the new chart that already exists (read-owners.ts: one list per kind and
// namespace) and judge (drift/ownership.ts, pure). Helm's flag adopts anything, so a first install
// whose ConfigMap another release owns took it silently, and uninstalling it then deleted the
// other release's object (issue 36). Here such an object is refused: exit 4 naming it, its
// release and namespace, and the ways out; nothing changed. With `always` it is taken, and said.
import { describeClaim, judgeOwnership, type Claim, type LiveObject } from '../../drift/ownership.js';
import { HelmOperationError } from '../../common/errors.js';
import { stopSignal, type ActionRun, type Narration, type Stoppable } from './action.js';

export interface OwnersPort extends Narration, Stoppable {
  /** The release's namespace: the annotations of what it owns name it. */
  releaseNamespace: string;
  /** The new chart's objects (hooks and crds/ apart: helm adopts neither) that exist now, as they are. */
  liveObjects(signal: AbortSignal): Promise<LiveObject[]>;
}

/** Reads the owners, refuses another release's objects (first-install), names what helm adopts or takes. */
export const checkOwners: ActionRun<'owners', OwnersPort> = async (p, step) => {
  p.stage('checking who owns existing objects');
  const objects = await p.liveObjects(stopSignal(p));
  const verdict = judgeOwnership(objects, { release: p.release, namespace: p.releaseNamespace }, step.mode);
  if (verdict.refused.length > 0) throw refusal(p.release, p.releaseNamespace, verdict.refused);
  for (const c of verdict.taken) {
    p.logger.warn(
      { object: describeClaim({ ...c, owner: undefined }), owner: c.owner },
      `--take-ownership always: taking ${describeClaim(c)} over for release ${p.release}; from now on uninstalling ${p.release} deletes it, and release ${c.owner!.release} no longer owns it`,
    );
  }
  for (const c of verdict.adopted)
    p.logger.info(
      { object: describeClaim(c) },
      `adopting ${describeClaim(c)}: no release owns it (--take-ownership ${step.mode})`,
    );
  return { owners: verdict };
};

function refusal(release: string, namespace: string, refused: Claim[]): HelmOperationError {
  const first = refused[0]!.owner!;
  return new HelmOperationError(
    [
      `${refused.length} object(s) of release ${release} (namespace ${namespace}) belong to another helm release; nothing was changed:`,
      ...refused.map(
        (c) =>
          `  ${c.kind} ${c.name}${c.namespace ? ` in namespace ${c.namespace}` : ''}: owned by release ${c.owner!.release} in namespace ${c.owner!.namespace || '(none)'}`,
      ),
      `--take-ownership first-install adopts only objects no release owns: helm would make these ${release}'s, and uninstalling ${release} would delete them.`,
    ].join('\n'),
    {
      hint: `Uninstall them from their release there (helm uninstall ${first.release} -n ${first.namespace || '<namespace>'}, or drop them from its chart), or run once with --take-ownership always (HELM_INSTALLER_TAKE_OWNERSHIP=always) to take them over on purpose.`,
    },
  );
}
