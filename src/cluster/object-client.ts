// Reads and server-side applies of arbitrary objects as plain JSON, through the client's
// configured transport (auth, TLS, the kept connection pool). Not the client's typed
// KubernetesObjectApi: it (de)serialises known kinds through its models, which turns timestamps
// into Dates and would compare a reshaped object with what the API server holds, and it reads
// discovery again for every kind. The paths come from the run's one discovery read instead.
import type { ResourceInfo } from './capabilities.js';
import { kubeModule, type KubeClients } from './kube-client.js';
import { withCallTimeout } from './kube-errors.js';

export type Obj = Record<string, unknown>;

interface ApplyOptions {
  fieldManager: string;
  dryRun: boolean;
}

export interface ObjectClient {
  /**
   * The live object, or undefined when it does not exist (404). `metadataOnly`: its metadata alone
   * (the API server's PartialObjectMetadata), for a look at its annotations and field managers
   * without reading a big object whole.
   */
  get(path: string, o?: { metadataOnly?: boolean }): Promise<Obj | undefined>;
  /** A collection (a List: its `items` carry neither kind nor apiVersion), one page of it. */
  list(path: string, query: Record<string, string>): Promise<Obj>;
  /**
   * Deletes the object with this propagation, only while it is the object `uid` names (a
   * precondition: never one created again since it was read); false when it is already gone.
   */
  delete(path: string, propagationPolicy: PropagationPolicy, uid?: string): Promise<boolean>;
  /** A server-side apply that takes over conflicting fields (force), as helm's own upgrades should. */
  apply(path: string, body: Obj, o: ApplyOptions): Promise<Obj>;
  /**
   * A create (POST) of `body` into the collection at `path`, as a dry run: the created object and
   * the API server's warnings (Pod Security's `would violate PodSecurity ...` in a namespace that
   * only warns), or an ObjectApiError carrying the refusal.
   */
  createDryRun(path: string, body: Obj): Promise<{ object: Obj; warnings: string[] }>;
  /** A JSON patch (RFC 6902): values set at exact paths, list items by index. */
  jsonPatch(path: string, ops: JsonPatchOp[], fieldManager: string): Promise<Obj>;
  /** A JSON merge patch (RFC 7386): maps merged, a null removes the key. */
  mergePatch(path: string, patch: Obj, fieldManager: string): Promise<Obj>;
  /** A whole-object update (PUT) at the resourceVersion it carries (409 when someone wrote it since); dryRun: what it would store, nothing written. */
  update(path: string, body: Obj, fieldManager: string, dryRun?: boolean): Promise<Obj>;
}

/** What happens to the objects a deleted one owns (its pods): orphaned, or deleted before or after it. */
export type PropagationPolicy = 'Orphan' | 'Foreground' | 'Background';

export interface JsonPatchOp {
  op: 'add' | 'replace' | 'test';
  path: string;
  value: unknown;
}

/** The failed call in the shape of the client's ApiException, so kube-errors reads it. */
export class ObjectApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
  ) {
    super(`HTTP ${code}`);
  }
}

/** The REST path of one object: `/apis/apps/v1/namespaces/ns/deployments/web`. */
export function objectPath(
  apiVersion: string,
  info: ResourceInfo,
  name: string,
  namespace: string | undefined,
): string {
  return `${collectionPath(apiVersion, info, namespace)}/${encodeURIComponent(name)}`;
}

/** The REST path of a kind's objects in a namespace (or the cluster): `/apis/apps/v1/namespaces/ns/deployments`. */
export function collectionPath(apiVersion: string, info: ResourceInfo, namespace: string | undefined): string {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const scope = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${scope}/${info.resource}`;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

interface Body {
  type: string;
  text: string;
}

/** One request, its answer parsed: throws an ObjectApiError on a status outside 2xx. */
type Send = (
  method: Method,
  path: string,
  query: Record<string, string>,
  body?: Body,
  accept?: string,
) => Promise<{ object: Obj; warnings: string[] }>;

export async function objectClient(kube: KubeClients, signal?: AbortSignal): Promise<ObjectClient> {
  return verbs(await rawSend(kube, signal));
}

/** The transport: one request through the client's configuration, under the call timeout. */
async function rawSend(kube: KubeClients, signal: AbortSignal | undefined): Promise<Send> {
  const k8s = await kubeModule();
  // The subclass only reaches the configuration (transport and auth) the client keeps protected.
  class RawApi extends k8s.KubernetesObjectApi {
    async send(
      method: Method,
      path: string,
      query: Record<string, string>,
      body?: Body,
      accept = 'application/json',
    ): Promise<{ status: number; text: string; warning?: string }> {
      const context = this.configuration.baseServer.makeRequestContext(path, method as never);
      context.setHeaderParam('Accept', accept);
      for (const [k, v] of Object.entries(query)) context.setQueryParam(k, v);
      if (body !== undefined) {
        context.setHeaderParam('Content-Type', body.type);
        context.setBody(body.text);
      }
      if (signal) context.setSignal(signal);
      for (const auth of [this.configuration.authMethods.BearerToken, this.configuration.authMethods.default])
        await auth?.applySecurityAuthentication(context);
      const response = await this.configuration.httpApi.send(context).toPromise();
      return { status: response.httpStatusCode, text: await response.body.text(), warning: response.headers.warning };
    }
  }
  const api = kube.config.makeApiClient(RawApi);
  return async (method, path, query, body, accept) => {
    const r = await withCallTimeout(api.send(method, path, query, body, accept));
    if (r.status < 200 || r.status > 299) throw new ObjectApiError(r.status, r.text);
    return { object: JSON.parse(r.text) as Obj, warnings: parseWarnings(r.warning) };
  };
}

/** The client's verbs over one transport: each its method, query and body type. */
function verbs(send: Send): ObjectClient {
  const call = async (method: Method, path: string, query: Record<string, string>, body?: Body, accept?: string) =>
    (await send(method, path, query, body, accept)).object;
  return {
    async get(path, o = {}) {
      try {
        return await call('GET', path, {}, undefined, o.metadataOnly ? METADATA_ONLY : undefined);
      } catch (error) {
        if (error instanceof ObjectApiError && error.code === 404) return undefined;
        throw error;
      }
    },
    list: (path, query) => call('GET', path, query),
    async delete(path, propagationPolicy, uid) {
      const options = {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        propagationPolicy,
        ...(uid ? { preconditions: { uid } } : {}),
      };
      try {
        await call('DELETE', path, {}, { type: 'application/json', text: JSON.stringify(options) });
        return true;
      } catch (error) {
        if (error instanceof ObjectApiError && error.code === 404) return false;
        throw error;
      }
    },
    apply: (path, body, o) =>
      call(
        'PATCH',
        path,
        { fieldManager: o.fieldManager, force: 'true', ...(o.dryRun ? { dryRun: 'All' } : {}) },
        { type: 'application/apply-patch+yaml', text: JSON.stringify(body) },
      ),
    createDryRun: (path, body) =>
      send('POST', path, { dryRun: 'All' }, { type: 'application/json', text: JSON.stringify(body) }),
    jsonPatch: (path, ops, fieldManager) =>
      call('PATCH', path, { fieldManager }, { type: 'application/json-patch+json', text: JSON.stringify(ops) }),
    mergePatch: (path, patch, fieldManager) =>
      call('PATCH', path, { fieldManager }, { type: 'application/merge-patch+json', text: JSON.stringify(patch) }),
    update: (path, body, fieldManager, dryRun) =>
      call(
        'PUT',
        path,
        { fieldManager, ...(dryRun ? { dryRun: 'All' } : {}) },
        { type: 'application/json', text: JSON.stringify(body) },
      ),
  };
}

/**
 * Pure: the texts of a Warning header (RFC 7234: `299 - "text"`, several joined with commas when
 * the transport folds them into one value).
 */
export function parseWarnings(header: string | undefined): string[] {
  if (!header) return [];
  return [...header.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}
