// The objects an upgrade must recreate, for install (plan marks the same objects from the dry
// runs it asks anyway: src/preview/recreate-entries.ts): the pure comparison of the
// previous manifest with the new render (immutable-fields.ts) gives candidates, with no request;
// each candidate is then read (it must exist and be this release's: helm's annotations name it)
// and confirmed by a server-side apply dry run with helm's field manager, which the API server
// refuses as it would refuse helm's own upgrade. A candidate the server accepts (a default
// spelled out, a type change that needs nothing) is not an immutable change.
import type { ResourceIndex } from '../cluster/capabilities.js';
import type { KubeClients } from '../cluster/kube-client.js';
import { apiStatus, toInstallerApiError } from '../cluster/kube-errors.js';
import { InstallerError, PreflightError } from '../common/errors.js';
import { HELM_FIELD_MANAGER, mapBounded } from './detect-drift.js';
import { immutableCandidates, isImmutableRefusal, type ImmutableCandidate } from './immutable-fields.js';
import { describeObject, manifestObjects, placeObjects } from './manifest-objects.js';
import { objectClient, type Obj, type ObjectClient } from '../cluster/object-client.js';
import { refusal } from './refusal.js';

/** A candidate (immutable-fields.ts) the API server confirmed it refuses. */
export interface ImmutableChange extends Omit<ImmutableCandidate, 'body'> {
  /** The API server's refusal of the dry run, fields named, values masked (refusal.ts). */
  reason: string;
  /** The live object's uid: the delete is for this object only. */
  uid: string;
}

export interface ImmutableInput {
  /** The manifest of the release's last deployed revision. */
  previousManifest: string;
  /** The new render (hooks are skipped: helm recreates them anyway). */
  manifests: string;
  release: string;
  releaseNamespace: string;
  resources: ResourceIndex;
  signal?: AbortSignal;
}

const CONCURRENCY = 4;
const HOOK = 'helm.sh/hook';

/** Changes the API server would refuse, each confirmed; [] without any request when the manifests differ in no immutable field. */
export async function findImmutableChanges(kube: KubeClients, i: ImmutableInput): Promise<ImmutableChange[]> {
  // No CRD field is immutable (IMMUTABLE_SPEC): the CRDs are not read.
  const place = (text: string) =>
    placeObjects(manifestObjects(text, { withoutCrds: true }), i.resources, {
      releaseNamespace: i.releaseNamespace,
      release: i.release,
    });
  const next = place(i.manifests).filter((p) => !annotation(p.body, HOOK));
  const candidates = immutableCandidates(place(i.previousManifest), next);
  if (candidates.length === 0) return [];
  const client = await objectClient(kube, i.signal);
  const confirmed = await mapBounded(candidates, CONCURRENCY, (c) => confirm(kube, client, c, i));
  return confirmed.filter((c): c is ImmutableChange => c !== undefined);
}

async function confirm(
  kube: KubeClients,
  client: ObjectClient,
  c: ImmutableCandidate,
  i: ImmutableInput,
): Promise<ImmutableChange | undefined> {
  const live = await client.get(c.path).catch((error: unknown) => {
    throw checkError(kube, error, c, 'get');
  });
  // Gone (deleted by an earlier run that stopped before helm): helm creates it. Another owner's:
  // never deleted here; helm refuses to take it over and says so.
  if (!live || !ownedBy(live, i)) return undefined;
  try {
    await client.apply(c.path, c.body, { fieldManager: HELM_FIELD_MANAGER, dryRun: true });
    return undefined;
  } catch (error) {
    const status = apiStatus(error);
    if (status !== 400 && status !== 422) throw checkError(kube, error, c, 'patch');
    const reason = refusal(error);
    if (!isImmutableRefusal(reason)) return undefined;
    const uid = String((live.metadata as Obj | undefined)?.uid ?? '');
    return {
      apiVersion: c.apiVersion,
      kind: c.kind,
      name: c.name,
      ...(c.namespace ? { namespace: c.namespace } : {}),
      path: c.path,
      fields: c.fields,
      how: c.how,
      reason,
      uid,
    };
  }
}

/** A 403 is missing RBAC (exit 6, kind and verb named); anything else as any API failure. */
function checkError(kube: KubeClients, error: unknown, c: ImmutableCandidate, verb: 'get' | 'patch'): InstallerError {
  const what = `checking fields that cannot change: ${verb} ${describeObject(c)}`;
  const status = apiStatus(error);
  if (status !== 401 && status !== 403) return toInstallerApiError(error, what, kube.server);
  return new PreflightError(`${what} is not allowed`, {
    hint: `Grant the installer's ServiceAccount "get" and "patch" on ${c.kind} (API group ${c.apiVersion.includes('/') ? c.apiVersion.split('/')[0] : 'core'})${c.namespace ? ` in namespace ${c.namespace}` : ''} (see manifests/installer.yaml).`,
    cause: error,
  });
}

function ownedBy(live: Obj, i: ImmutableInput): boolean {
  return (
    annotation(live, 'meta.helm.sh/release-name') === i.release &&
    annotation(live, 'meta.helm.sh/release-namespace') === i.releaseNamespace
  );
}

function annotation(o: Obj, name: string): string | undefined {
  const value = ((o.metadata as Obj | undefined)?.annotations as Obj | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}
