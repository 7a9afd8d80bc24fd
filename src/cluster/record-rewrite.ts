// A release record's manifest rewritten in place, as helm-mapkubeapis does for APIs a cluster
// upgrade removed: helm builds the objects of the current record before every upgrade, and one
// apiVersion the cluster no longer serves fails every run. The original record is kept first, in
// a Secret of its own beside the release's (`helm-installer.unmapped.<release>.v<N>`, data.release
// exactly as helm wrote it; helm lists records by label and never sees it), so a person can put
// it back (README, "Removed APIs"). Two writes, in that order, each one request: a run killed
// between them leaves the record as it was and the copy, and the next run maps it again (the copy
// it finds is kept: it holds the oldest original).
import type { V1Secret } from '@kubernetes/client-node';
import { InstallerError } from '../common/errors.js';
import { ExitCode } from '../common/exit-codes.js';
import type { KubeClients } from './kube-client.js';
import { isConflict, toInstallerApiError, withCallTimeout } from './kube-errors.js';
import { decodeReleasePayload, encodeReleasePayload, releaseSecretName } from './release-secrets.js';

/** Helm's own limit: a record is one Secret, and a Secret's data is at most 1 MiB. */
const RECORD_LIMIT = 1024 * 1024;

function unmappedSecretName(release: string, revision: number): string {
  return `helm-installer.unmapped.${release}.v${revision}`;
}

/** The command that puts the original record back (README), for the log and the copy's annotation. */
export function restoreCommand(namespace: string, release: string, revision: number): string {
  const copy = unmappedSecretName(release, revision);
  return `kubectl -n ${namespace} patch secret ${releaseSecretName(release, revision)} --type merge -p "{\\"data\\":{\\"release\\":\\"$(kubectl -n ${namespace} get secret ${copy} -o jsonpath='{.data.release}')\\"}}"`;
}

/**
 * Rewrites revision `revision`'s manifest with `edit` (undefined: nothing to change, no write).
 * Returns whether it wrote, and the name of the copy of the original.
 */
export async function rewriteRecordManifest(
  kube: KubeClients,
  at: { namespace: string; release: string; revision: number },
  edit: (manifest: string) => string | undefined,
): Promise<{ rewritten: boolean; copy: string }> {
  const { namespace, release, revision } = at;
  const name = releaseSecretName(release, revision);
  const copy = unmappedSecretName(release, revision);
  const call = <T>(what: string, fn: () => Promise<T>) =>
    withCallTimeout(fn()).catch((error: unknown) =>
      Promise.reject(toInstallerApiError(error, `${what} (namespace ${namespace})`, kube.server)),
    );
  const secret = await call(`reading ${name}`, () => kube.core.readNamespacedSecret({ name, namespace }));
  const payload = secret.data?.release;
  if (!payload) throw new InstallerError(ExitCode.internal, `release record ${namespace}/${name} has no data.release`);
  const json = decodeReleasePayload(Buffer.from(payload, 'base64'));
  const manifest = (JSON.parse(json) as { manifest?: unknown }).manifest;
  const edited = typeof manifest === 'string' ? edit(manifest) : undefined;
  if (edited === undefined || edited === manifest) return { rewritten: false, copy };
  const encoded = rewrittenPayload(json, edited, `${namespace}/${name}`);
  await keepOriginal(kube, call, { namespace, release, revision, copy, payload });
  const body: V1Secret = {
    ...secret,
    data: { ...secret.data, release: encoded.toString('base64') },
    metadata: {
      ...secret.metadata,
      labels: { ...secret.metadata?.labels, modifiedAt: String(Math.floor(Date.now() / 1000)) },
    },
  };
  // resourceVersion from the read: a concurrent writer makes this fail instead of being lost.
  await call(`updating ${name}`, () => kube.core.replaceNamespacedSecret({ name, namespace, body }));
  return { rewritten: true, copy };
}

/** Pure: data.release for the record with `manifest`, refused (before any write) when a Secret could not hold it. */
export function rewrittenPayload(json: string, manifest: string, record: string, limit = RECORD_LIMIT): Buffer {
  const encoded = encodeReleasePayload(setReleaseManifest(json, manifest));
  if (encoded.length > limit) {
    throw new InstallerError(
      ExitCode.invalidInput,
      `the rewritten record ${record} would be ${encoded.length} bytes, over the ${limit} a Secret holds; nothing was changed`,
      {
        hint: 'Map the record by hand (helm mapkubeapis), or uninstall and install the release again.',
      },
    );
  }
  return encoded;
}

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

async function keepOriginal(
  kube: KubeClients,
  call: Call,
  c: { namespace: string; release: string; revision: number; copy: string; payload: string },
): Promise<void> {
  const body: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'helm-installer/unmapped-release',
    metadata: {
      name: c.copy,
      namespace: c.namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'helm-installer',
        'helm-installer/unmapped-release': c.release,
        'helm-installer/unmapped-revision': String(c.revision),
      },
      annotations: { 'helm-installer/restore': restoreCommand(c.namespace, c.release, c.revision) },
    },
    data: { release: c.payload },
  };
  try {
    await withCallTimeout(kube.core.createNamespacedSecret({ namespace: c.namespace, body }));
  } catch (error) {
    // A copy from a run killed before its rewrite, or from an earlier mapping: it holds the oldest original.
    if (isConflict(error)) return;
    await call(`keeping the original record as ${c.copy}`, () => Promise.reject(error));
  }
}

/**
 * Pure. The release JSON with its top-level `manifest` replaced, by editing that value's text:
 * re-serialising the whole record would round numbers in the user's values (beyond 2^53). Checked
 * by parsing both and comparing everything else.
 */
export function setReleaseManifest(json: string, manifest: string): string {
  const span = topLevelValueSpan(json, 'manifest');
  if (!span) throw new Error('release record has no manifest');
  const out = json.slice(0, span[0]) + JSON.stringify(manifest) + json.slice(span[1]);
  const before = JSON.parse(json) as Record<string, unknown>;
  const after = JSON.parse(out) as Record<string, unknown>;
  if (
    after.manifest !== manifest ||
    JSON.stringify({ ...after, manifest: '' }) !== JSON.stringify({ ...before, manifest: '' })
  ) {
    throw new Error('editing the release manifest changed other fields');
  }
  return out;
}

/** Pure: [start, end) of the value of a key of the outermost object (hooks and values have `manifest` keys of their own). */
export function topLevelValueSpan(json: string, key: string): [number, number] | undefined {
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      const end = stringEnd(json, i);
      if (depth === 1 && expectKey && JSON.parse(json.slice(i, end)) === key) {
        let v = json.indexOf(':', end) + 1;
        while (/\s/.test(json[v]!)) v++;
        return [v, valueEnd(json, v)];
      }
      i = end - 1;
      expectKey = false;
    } else if (c === '{' || c === '[') {
      depth++;
      expectKey = c === '{' && depth === 1;
    } else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return undefined;
}

/** Index just past the string starting at `i` (a quote). */
function stringEnd(json: string, i: number): number {
  for (let j = i + 1; j < json.length; j++) {
    if (json[j] === '\\') j++;
    else if (json[j] === '"') return j + 1;
  }
  throw new Error('unterminated string in the release record');
}

/** Index just past the JSON value starting at `v`. */
function valueEnd(json: string, v: number): number {
  if (json[v] === '"') return stringEnd(json, v);
  let depth = 0;
  for (let i = v; i < json.length; i++) {
    const c = json[i];
    if (c === '"') i = stringEnd(json, i) - 1;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === ',' && depth === 0) return i;
  }
  return json.length;
}
