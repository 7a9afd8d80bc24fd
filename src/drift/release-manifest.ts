// The manifest helm applied for a revision, read from its release record (the Secret
// sh.helm.release.v1.<release>.v<N>) instead of `helm get manifest`: the no-op path then needs no
// helm run at all. Pure.
import { decodeReleasePayload } from '../cluster/release-secrets.js';

export interface RecordedRelease {
  name: string;
  namespace: string;
  revision: number;
  /** The multi-document YAML helm applied (hooks are kept apart by helm and are not in it). */
  manifest: string;
}

/**
 * From the Secret's data.release as the API returns it (base64 of helm's own base64 of the
 * gzipped JSON). Throws when the record is not a helm release.
 */
export function releaseFromRecord(dataRelease: string | undefined): RecordedRelease {
  if (!dataRelease) throw new Error('the release record has no data.release');
  const json = JSON.parse(decodeReleasePayload(Buffer.from(dataRelease, 'base64'))) as {
    name?: unknown;
    namespace?: unknown;
    version?: unknown;
    manifest?: unknown;
  };
  if (typeof json.name !== 'string' || typeof json.version !== 'number')
    throw new Error('the release record is not a helm release (no name or version)');
  return {
    name: json.name,
    namespace: typeof json.namespace === 'string' ? json.namespace : '',
    revision: json.version,
    manifest: typeof json.manifest === 'string' ? json.manifest : '',
  };
}
