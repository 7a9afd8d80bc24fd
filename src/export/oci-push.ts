// Pushes a directory to a registry as an OCI artifact in Flux's format, the one `flux push
// artifact` writes and source-controller's OCIRepository pulls: one layer (the directory as
// tar+gzip), a Flux config media type, and the OpenContainers annotations that say where the
// content came from. Spoken over the registry HTTP API (OCI distribution spec), so `export --push`
// needs neither the flux CLI nor a docker daemon.
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { buffer } from 'node:stream/consumers';
import * as tar from 'tar';
import { type InstallerError, TransientError, UsageError } from '../common/errors.js';
import { httpRequest, type HttpResponse } from '../registry/registry-http.js';

const FLUX_CONTENT_MEDIA_TYPE = 'application/vnd.cncf.flux.content.v1.tar+gzip';
const FLUX_CONFIG_MEDIA_TYPE = 'application/vnd.cncf.flux.config.v1+json';
const OCI_MANIFEST_MEDIA_TYPE = 'application/vnd.oci.image.manifest.v1+json';

export interface PushArtifactOptions {
  /** host[:port] of the registry, e.g. 127.0.0.1:5000 */
  registry: string;
  /** e.g. app/storefront */
  repository: string;
  tag: string;
  /** The directory whose content becomes the artifact (its entries, not the directory itself). */
  dir: string;
  /** Where the content comes from (org.opencontainers.image.source), e.g. a Git URL. */
  source: string;
  /** Its version there (org.opencontainers.image.revision), e.g. `1.2.0@sha1:abc...`. */
  revision: string;
  /** Speak http:// instead of https:// (a loopback or test registry). */
  plainHttp?: boolean;
  /** Extra CA certificates (PEM) for an https registry. */
  ca?: string[];
  /** org.opencontainers.image.created; now when not given. Fixed, it makes the digest repeatable. */
  created?: Date;
}

interface Descriptor {
  mediaType: string;
  size: number;
  digest: string;
}

const TIMEOUT_MS = 60_000;
/** Every entry gets this mtime, so the same directory always gives the same layer digest. */
const FIXED_MTIME = new Date(0);

/** Pushes `dir` and tags it; returns the manifest digest (sha256:...). */
export async function pushArtifact(options: PushArtifactOptions): Promise<string> {
  checkOptions(options);
  const layer = await tarballOf(options.dir);
  const config = Buffer.from('{}');
  const manifest = manifestJson(
    describe(FLUX_CONFIG_MEDIA_TYPE, config),
    describe(FLUX_CONTENT_MEDIA_TYPE, layer),
    annotations(options),
  );
  const base = `${options.plainHttp ? 'http' : 'https'}://${options.registry}/v2/${options.repository}`;
  await uploadBlob(base, options, layer);
  await uploadBlob(base, options, config);
  const digest = sha256(manifest);
  const res = await send(options, 'PUT', `${base}/manifests/${options.tag}`, manifest, OCI_MANIFEST_MEDIA_TYPE);
  expectStatus(res, [201], `storing the manifest ${options.repository}:${options.tag}`, options);
  return digest;
}

/** The directory as a deterministic tar+gzip: sorted entries, fixed mtime, no owner names. */
export async function tarballOf(dir: string): Promise<Buffer> {
  const entries = await sortedEntries(dir);
  const stream = tar.create({ cwd: dir, gzip: true, portable: true, noDirRecurse: true, mtime: FIXED_MTIME }, entries);
  return buffer(stream);
}

/** Every file and folder under `dir`, relative, in byte order (folders before their content). */
async function sortedEntries(dir: string): Promise<string[]> {
  const all = await readdir(dir, { recursive: true, withFileTypes: true });
  return all
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The manifest as `flux push artifact` lays it out (same fields, same order). */
export function manifestJson(config: Descriptor, layer: Descriptor, notes: Record<string, string>): Buffer {
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST_MEDIA_TYPE,
      config,
      layers: [layer],
      annotations: notes,
    }),
  );
}

/** The OpenContainers annotations the flux CLI writes; created in RFC 3339 without fractions. */
export function annotations(
  options: Pick<PushArtifactOptions, 'source' | 'revision' | 'created'>,
): Record<string, string> {
  const created = (options.created ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    'org.opencontainers.image.created': created,
    'org.opencontainers.image.revision': options.revision,
    'org.opencontainers.image.source': options.source,
  };
}

export function describe(mediaType: string, content: Buffer): Descriptor {
  return { mediaType, size: content.length, digest: sha256(content) };
}

function sha256(content: Buffer): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** A blob the registry already holds is not sent again (a re-push of an unchanged base). */
async function uploadBlob(base: string, options: PushArtifactOptions, content: Buffer): Promise<void> {
  const digest = sha256(content);
  const head = await send(options, 'HEAD', `${base}/blobs/${digest}`);
  if (head.status === 200) return;
  const start = await send(options, 'POST', `${base}/blobs/uploads/`);
  expectStatus(start, [202], `starting the upload of ${digest}`, options);
  const location = start.headers.location;
  if (!location) throw registryError(`the registry gave no Location for the upload of ${digest}`, options);
  // Location may be relative and may already carry a query (the upload's state).
  const target = new URL(location, base);
  target.searchParams.set('digest', digest);
  const put = await send(options, 'PUT', target.toString(), content, 'application/octet-stream');
  expectStatus(put, [201], `uploading ${digest}`, options);
}

async function send(
  options: PushArtifactOptions,
  method: 'HEAD' | 'POST' | 'PUT',
  url: string,
  body?: Buffer,
  contentType?: string,
): Promise<HttpResponse> {
  try {
    return await httpRequest({
      url: new URL(url),
      method,
      body: body ?? (method === 'HEAD' ? undefined : Buffer.alloc(0)),
      headers: contentType ? { 'Content-Type': contentType } : {},
      ca: options.ca,
      timeoutMs: TIMEOUT_MS,
      maxBodyBytes: 64 * 1024,
    });
  } catch (cause) {
    throw new TransientError(`cannot reach the registry ${options.registry}: ${(cause as Error).message}`, {
      hint: `check that ${options.registry} is up and that http vs https (plain HTTP: ${options.plainHttp ? 'on' : 'off'}) matches it`,
      cause,
    });
  }
}

function expectStatus(res: HttpResponse, ok: number[], doing: string, options: PushArtifactOptions): void {
  if (ok.includes(res.status)) return;
  // The spec's error body: {"errors":[{"code":"...","message":"..."}]}; fall back to raw text.
  const text = res.body.toString('utf8').slice(0, 500).trim();
  throw registryError(
    `${doing} failed: the registry answered ${res.status}${text ? `: ${text}` : ''}`,
    options,
    res.status,
  );
}

/** 5xx (or no answer) may pass on a retry; a 4xx (denied, unknown name) needs a different target. */
function registryError(message: string, options: PushArtifactOptions, status = 500): InstallerError {
  const text = `pushing to ${options.registry}/${options.repository}: ${message}`;
  if (status >= 500) return new TransientError(text, { hint: 'retry; if it persists, check the registry' });
  return new UsageError(text, {
    hint: 'check the registry address, the repository name and that it accepts pushes without credentials',
  });
}

function checkOptions(options: PushArtifactOptions): void {
  // The distribution spec's repository name and tag grammars, so a typo fails before any upload.
  if (!/^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/.test(options.repository)) {
    throw new UsageError(`OCI repository "${options.repository}" is not a valid name`, {
      hint: 'use lowercase letters, digits and . _ - separated by /, e.g. app/storefront',
    });
  }
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/.test(options.tag)) {
    throw new UsageError(`OCI tag "${options.tag}" is not a valid tag`, {
      hint: 'use letters, digits, . _ - (at most 128, not starting with . or -), e.g. 1.2.0',
    });
  }
}
