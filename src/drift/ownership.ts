// Who owns the objects a release is about to adopt (issue 36). Helm's --take-ownership adopts
// anything: a ConfigMap another release owns became ours without a word, and uninstalling ours
// then deleted the other release's object. Helm marks what a release owns with the annotations
// `meta.helm.sh/release-name` and `meta.helm.sh/release-namespace` (the `managed-by: Helm` label
// alone is not ownership: helm's own check reads the annotations). So a first install
// (--take-ownership first-install) adopts only objects no release owns (made by `kubectl apply`,
// say), and refuses, before any change, one another release owns; `always` takes it, and says so.
// Pure: the live objects are read once by the caller (drift/read-live.ts), the plan shows the same.
import type { Obj } from '../cluster/object-client.js';

const RELEASE_NAME = 'meta.helm.sh/release-name';
const RELEASE_NAMESPACE = 'meta.helm.sh/release-namespace';

export interface ReleaseRef {
  release: string;
  namespace: string;
}

/** One object of the new chart that already exists. */
export interface LiveObject {
  kind: string;
  name: string;
  namespace?: string;
  live: Obj;
}

export interface Claim {
  kind: string;
  name: string;
  namespace?: string;
  /** The release that owns it now; undefined: none (no helm annotations). */
  owner?: ReleaseRef;
}

export interface OwnershipVerdict {
  /** Owned by no release: adopted (helm's --take-ownership). */
  adopted: Claim[];
  /** Owned by another release and --take-ownership always: taken from it. */
  taken: Claim[];
  /** Owned by another release and a first install: refused, nothing changed. */
  refused: Claim[];
}

/** The release the annotations name; undefined when they name none. */
export function ownerOf(live: Obj): ReleaseRef | undefined {
  const annotations = ((live.metadata as Obj | undefined)?.annotations ?? {}) as Record<string, unknown>;
  const release = annotations[RELEASE_NAME];
  if (typeof release !== 'string' || release === '') return undefined;
  const namespace = annotations[RELEASE_NAMESPACE];
  return { release, namespace: typeof namespace === 'string' ? namespace : '' };
}

/**
 * Pure. `ours`: this release; `mode`: what --take-ownership makes of this step (helm is given
 * --take-ownership only with `always`, or `first-install` on a first install). Objects this
 * release already owns are in no list.
 */
export function judgeOwnership(
  objects: readonly LiveObject[],
  ours: ReleaseRef,
  mode: 'always' | 'first-install',
): OwnershipVerdict {
  const verdict: OwnershipVerdict = { adopted: [], taken: [], refused: [] };
  for (const o of objects) {
    const owner = ownerOf(o.live);
    const claim: Claim = {
      kind: o.kind,
      name: o.name,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(owner ? { owner } : {}),
    };
    if (!owner) verdict.adopted.push(claim);
    else if (owner.release === ours.release && owner.namespace === ours.namespace) continue;
    else (mode === 'always' ? verdict.taken : verdict.refused).push(claim);
  }
  return verdict;
}

/** `ConfigMap settings in namespace shop (release other in namespace shop)`. */
export function describeClaim(c: Claim): string {
  const where = c.namespace ? ` in namespace ${c.namespace}` : '';
  return `${c.kind} ${c.name}${where}${c.owner ? ` (release ${c.owner.release} in namespace ${c.owner.namespace || '(none)'})` : ''}`;
}
