// Helm's release records, read and (for one repair) written directly: the Secrets
// `sh.helm.release.v1.<release>.v<N>` that helm 3 and helm 4 both keep (labels owner=helm,
// name, status, version; data.release = base64(gzip(JSON of the release))). Helm has no command
// to mark a pending release failed; Flux's helm-controller and k3s's klipper-helm write the
// record the same way.
import { gunzipSync, gzipSync, constants as zlib } from 'node:zlib';
import type { V1Secret } from '@kubernetes/client-node';
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { KubeClients } from './kube-client.js';
import { toInstallerApiError, withCallTimeout } from './kube-errors.js';

export function releaseSecretName(release: string, revision: number): string {
  return `sh.helm.release.v1.${release}.v${revision}`;
}

/** What the record's labels say about one revision (no data decoded). */
export interface RevisionLabels {
  revision: number;
  status: string;
  labels: Record<string, string>;
}

/** Pure: the payload of data.release (already base64-decoded once by the API) to JSON text. */
export function decodeReleasePayload(payload: Buffer): string {
  const inner = Buffer.from(payload.toString('latin1'), 'base64');
  // Helm gzips the JSON (magic 1f 8b); very old records are plain JSON.
  return inner[0] === 0x1f && inner[1] === 0x8b ? gunzipSync(inner).toString('utf8') : inner.toString('utf8');
}

/** Pure: JSON text back to what data.release holds, the way helm writes it. */
export function encodeReleasePayload(json: string): Buffer {
  return Buffer.from(
    gzipSync(Buffer.from(json, 'utf8'), { level: zlib.Z_BEST_COMPRESSION }).toString('base64'),
    'latin1',
  );
}

/**
 * Pure. Sets info.status (and info.description) in the release JSON by editing those two fields
 * in the text: re-serialising the whole record would round numbers in the user's values (JSON
 * numbers beyond 2^53), and the record must stay what helm wrote apart from the status. The
 * result is checked by parsing both and comparing everything else.
 */
export function setReleaseStatus(json: string, from: string, to: string, description: string): string {
  const before = JSON.parse(json) as { info?: { status?: string; description?: string } };
  if (before.info?.status !== from)
    throw new Error(`release record status is ${before.info?.status}, expected ${from}`);
  // info is the second field of a helm release (after name), so the first "status" and
  // "description" keys at that nesting are info's; a key inside a JSON string would be escaped.
  const infoAt = json.indexOf('"info":{');
  if (infoAt < 0) throw new Error('release record has no info object');
  const head = json.slice(0, infoAt);
  let info = json.slice(infoAt);
  info = info.replace(`"status":${JSON.stringify(from)}`, `"status":${JSON.stringify(to)}`);
  info = info.replace(/"description":"(?:[^"\\]|\\.)*"/, `"description":${JSON.stringify(description)}`);
  const out = head + info;
  const after = JSON.parse(out) as typeof before;
  if (after.info?.status !== to || after.info?.description !== description)
    throw new Error('could not set the release status in its record');
  const strip = (r: typeof before) =>
    JSON.stringify({ ...r, info: { ...r.info, status: undefined, description: undefined } });
  if (strip(after) !== strip(before)) throw new Error('editing the release status changed other fields');
  return out;
}

export class ReleaseRecords {
  private readonly payloads = new Map<number, string>();

  constructor(
    private readonly kube: KubeClients,
    readonly namespace: string,
    readonly release: string,
  ) {}

  /**
   * The revisions that matter for a decision, from labels only: every record except the
   * superseded ones (those are always older than the deployed one). Sorted oldest first.
   */
  async current(): Promise<RevisionLabels[]> {
    const list = await this.call('listing release records', () =>
      this.kube.core.listNamespacedSecret({
        namespace: this.namespace,
        labelSelector: `owner=helm,name=${this.release},status!=superseded`,
      }),
    );
    // The records' payloads came with the list: kept, so reading a revision's manifest (the drift
    // check) costs no second round trip.
    for (const s of list.items)
      if (s.data?.release) this.payloads.set(Number(s.metadata?.labels?.version), s.data.release);
    return list.items
      .map((s) => ({
        revision: Number(s.metadata?.labels?.version),
        status: s.metadata?.labels?.status ?? 'unknown',
        labels: s.metadata?.labels ?? {},
      }))
      .filter((r) => Number.isInteger(r.revision))
      .sort((a, b) => a.revision - b.revision);
  }

  /** A revision's `data.release` as the last list returned it (base64), when it did. */
  payload(revision: number): string | undefined {
    return this.payloads.get(revision);
  }

  /** Marks a pending revision failed in its record and its `status` label. */
  async markFailed(revision: number, from: string, description: string): Promise<void> {
    const name = releaseSecretName(this.release, revision);
    const secret = await this.call(`reading ${name}`, () =>
      this.kube.core.readNamespacedSecret({ name, namespace: this.namespace }),
    );
    const payload = secret.data?.release;
    if (!payload)
      throw new InstallerError(ExitCode.internal, `release record ${this.namespace}/${name} has no data.release`);
    const json = decodeReleasePayload(Buffer.from(payload, 'base64'));
    const edited = setReleaseStatus(json, from, 'failed', description);
    const body: V1Secret = {
      ...secret,
      data: { ...secret.data, release: encodeReleasePayload(edited).toString('base64') },
      metadata: {
        ...secret.metadata,
        labels: { ...secret.metadata?.labels, status: 'failed', modifiedAt: String(Math.floor(Date.now() / 1000)) },
      },
    };
    // resourceVersion from the read: a concurrent writer makes this fail instead of being lost.
    await this.call(`updating ${name}`, () =>
      this.kube.core.replaceNamespacedSecret({ name, namespace: this.namespace, body }),
    );
  }

  /**
   * Sets annotation `key` to `value` on every record of the release that lacks it; returns how
   * many were patched. After every helm run: helm writes a record again whole when it supersedes
   * it (a PUT of labels and data only), which drops the annotation from the older record.
   */
  async annotateAll(key: string, value: string): Promise<number> {
    const list = await this.call('listing release records', () =>
      this.kube.core.listNamespacedSecret({
        namespace: this.namespace,
        labelSelector: `owner=helm,name=${this.release}`,
      }),
    );
    const missing = list.items.filter((s) => s.metadata?.name && s.metadata.annotations?.[key] !== value);
    if (missing.length === 0) return 0;
    const { objectClient } = await import('./object-client.js');
    const client = await objectClient(this.kube);
    for (const secret of missing) {
      const name = secret.metadata!.name!;
      const path = `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/secrets/${encodeURIComponent(name)}`;
      const annotations = { ...secret.metadata?.annotations, [key]: value };
      await this.call(`annotating ${name}`, () =>
        client.jsonPatch(path, [{ op: 'add', path: '/metadata/annotations', value: annotations }], 'helm-installer'),
      );
    }
    return missing.length;
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await withCallTimeout(fn());
    } catch (err) {
      throw toInstallerApiError(err, `${what} (namespace ${this.namespace})`, this.kube.server);
    }
  }
}
