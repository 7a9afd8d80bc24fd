// Container image references, normalised the way the container runtime reads them (the grammar
// of distribution's `reference` package), and the KOTS naming of an image in a local registry.
// Pure functions: every other airgap step compares and rewrites through these.
import { InvalidInputError, UsageError } from './errors.js';

export interface ImageReference {
  /** Registry host with optional port, e.g. `docker.io`, `quay.io`, `registry.local:5000`. */
  registry: string;
  /** Path inside the registry, e.g. `library/nginx`, `bitnami/redis`. */
  repository: string;
  /** `latest` when the reference names neither a tag nor a digest (runtime behaviour). */
  tag?: string;
  /** `sha256:<hex>` (or sha384/sha512), without the `@`. */
  digest?: string;
  /** The reference exactly as given. */
  original: string;
  /** `registry/repository[:tag][@digest]`: equal strings mean the same image. */
  normalized: string;
}

/** A KOTS `LocalRegistryAddress`: `host[:port][/namespace...]`. */
export interface LocalRegistry {
  /** `host[:port]`, lowercased. */
  host: string;
  /** Path under the host that KOTS pushes into, e.g. `app`; absent when images sit at the root. */
  namespace?: string;
  /** `host[/namespace]`: what images get prefixed with. */
  address: string;
}

export const DOCKER_HUB = 'docker.io';
// Names that all mean Docker Hub. distribution only folds `index.docker.io`; we also fold the API
// endpoint so that `registry-1.docker.io/library/redis` and `redis` count as one image.
const DOCKER_HUB_ALIASES = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

// From distribution/reference/regexp.go.
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = new RegExp(`^(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`);
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^([a-z0-9]+(?:[.+_-][a-z0-9]+)*):([a-zA-Z0-9=_-]+)$/;
const DIGEST_HEX_LENGTH: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };
const NAME_MAX_LENGTH = 255;

function invalid(ref: string, what: string): InvalidInputError {
  return new InvalidInputError(`Invalid image reference "${ref}": ${what}`, {
    hint: 'Use the form [registry[:port]/]repository[:tag][@sha256:<64 hex digits>], e.g. docker.io/library/nginx:1.27.',
  });
}

function validateDigest(ref: string, digest: string): void {
  const m = DIGEST.exec(digest);
  if (!m) throw invalid(ref, `digest "${digest}" is not <algorithm>:<hex>`);
  const [, algorithm = '', hex = ''] = m;
  const length = DIGEST_HEX_LENGTH[algorithm];
  if (length === undefined) throw invalid(ref, `digest algorithm "${algorithm}" is not sha256, sha384 or sha512`);
  if (!/^[a-f0-9]+$/.test(hex) || hex.length !== length) {
    throw invalid(ref, `${algorithm} digest must be ${length} lowercase hex digits, got "${hex}"`);
  }
}

/** Is the first path component a registry? Same rule as distribution's splitDockerDomain. */
function looksLikeRegistry(component: string): boolean {
  return (
    component.includes('.') ||
    component.includes(':') ||
    component === 'localhost' ||
    // distribution: an uppercase first component cannot be a repository, so it is a host.
    component.toLowerCase() !== component
  );
}

export function parseImageReference(ref: string): ImageReference {
  if (typeof ref !== 'string' || ref === '') throw invalid(String(ref), 'it is empty');
  if (/\s/.test(ref)) throw invalid(ref, 'it contains whitespace');
  if (/^[a-f0-9]{64}$/.test(ref)) {
    throw invalid(ref, 'a bare 64-hex-digit string is an image ID, not a reference');
  }

  const at = ref.indexOf('@');
  let name = at === -1 ? ref : ref.slice(0, at);
  const digest = at === -1 ? undefined : ref.slice(at + 1);
  if (digest !== undefined) {
    if (digest.includes('@')) throw invalid(ref, 'it contains more than one "@"');
    validateDigest(ref, digest);
  }

  // A tag is a `:` after the last `/`; a `:` before it belongs to host:port.
  let tag: string | undefined;
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon + 1);
    name = name.slice(0, colon);
    if (!TAG.test(tag)) throw invalid(ref, `tag "${tag}" must be 1-128 of [A-Za-z0-9_.-], not starting with . or -`);
  }
  if (name === '') throw invalid(ref, 'the repository name is empty');

  const slash = name.indexOf('/');
  let registry = DOCKER_HUB;
  let repository = name;
  if (slash !== -1 && looksLikeRegistry(name.slice(0, slash))) {
    registry = name.slice(0, slash);
    repository = name.slice(slash + 1);
    if (!DOMAIN.test(registry)) throw invalid(ref, `registry "${registry}" is not a valid host[:port]`);
  }
  registry = registry.toLowerCase();
  if (DOCKER_HUB_ALIASES.has(registry)) {
    registry = DOCKER_HUB;
    // Official images live under `library/` on Docker Hub.
    if (!repository.includes('/')) repository = `library/${repository}`;
  }

  for (const component of repository.split('/')) {
    if (component === '') throw invalid(ref, 'the repository has an empty path component (a doubled or trailing "/")');
    if (component.toLowerCase() !== component) throw invalid(ref, `repository "${repository}" must be lowercase`);
    if (!PATH_COMPONENT.test(component)) {
      throw invalid(ref, `repository component "${component}" may only hold a-z, 0-9 and single separators . _ __ -`);
    }
  }
  if (`${registry}/${repository}`.length > NAME_MAX_LENGTH) {
    throw invalid(ref, `the name is longer than ${NAME_MAX_LENGTH} characters`);
  }

  // The runtime pulls `:latest` when a reference names neither tag nor digest.
  if (tag === undefined && digest === undefined) tag = 'latest';
  const parts = { registry, repository, tag, digest };
  return { ...parts, original: ref, normalized: formatImageReference(parts) };
}

/** Does the reference as written name a tag or a digest (`nginx` names neither: the runtime adds `:latest`)? */
export function namesTagOrDigest(ref: string): boolean {
  return ref.includes('@') || ref.lastIndexOf(':') > ref.lastIndexOf('/');
}

/** A reference without its tag (`<address>/<name>:<tag>` -> `<address>/<name>`); a digest stays. */
export function withoutTag(ref: string): string {
  if (ref.includes('@')) return ref;
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref;
}

export function formatImageReference(ref: Pick<ImageReference, 'registry' | 'repository' | 'tag' | 'digest'>): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/**
 * Parses KOTS's LocalRegistryAddress (`host[:port][/namespace...]`, no scheme). Whitespace around
 * it and a trailing `/` are tolerated because they come from hand-edited config screens.
 */
export function parseRegistryAddress(addr: string): LocalRegistry {
  const where = {
    hint: 'Give the local registry as host[:port][/namespace], e.g. registry.local:5000/myapp (no https://).',
  };
  const trimmed = String(addr ?? '')
    .trim()
    .replace(/\/+$/, '');
  if (trimmed === '') throw new UsageError('The local registry address is empty', where);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    throw new UsageError(`Local registry address "${addr}" must not include a scheme`, where);
  }
  if (/\s|@/.test(trimmed)) throw new UsageError(`Local registry address "${addr}" contains whitespace or "@"`, where);
  const [host = '', ...path] = trimmed.split('/');
  if (!DOMAIN.test(host))
    throw new UsageError(`Local registry address "${addr}": "${host}" is not a valid host[:port]`, where);
  for (const component of path) {
    if (!PATH_COMPONENT.test(component)) {
      throw new UsageError(
        `Local registry address "${addr}": namespace component "${component}" must be lowercase a-z, 0-9 and single separators`,
        where,
      );
    }
  }
  const lowerHost = host.toLowerCase();
  const namespace = path.length > 0 ? path.join('/') : undefined;
  return { host: lowerHost, namespace, address: namespace ? `${lowerHost}/${namespace}` : lowerHost };
}

/**
 * Already in the local registry under exactly the name KOTS would push it as:
 * `<host>[/<namespace>]/<one component>`. A longer path under the registry (`<reg>/<org>/<name>`,
 * what a `global.imageRegistry` hint makes of a multi-segment repository) is NOT local: KOTS
 * never pushes such a name, so it is renamed like any other image. A tag together with a digest
 * is not KOTS's form either (KOTS keeps only the digest).
 */
export function isKotsLocalName(ref: ImageReference, registry: LocalRegistry): boolean {
  if (ref.registry !== registry.host) return false;
  if (ref.digest !== undefined && ref.tag !== undefined) return false;
  const prefix = registry.namespace === undefined ? '' : `${registry.namespace}/`;
  if (!ref.repository.startsWith(prefix)) return false;
  return !ref.repository.slice(prefix.length).includes('/');
}

/**
 * The runtime pulls this reference from its KOTS name: the exact KOTS form, or that form with a
 * tag beside the digest (`<address>/<name>:<tag>@<digest>`: the digest is what is pulled, and
 * KOTS pushed `<address>/<name>@<digest>`). Not "local" for the plan, which still renames it to
 * the exact form; enough for an image nothing renames (a hook on helm 3).
 */
export function pullsKotsImage(ref: ImageReference, registry: LocalRegistry): boolean {
  if (isKotsLocalName(ref, registry)) return true;
  return ref.digest !== undefined && isKotsLocalName({ ...ref, tag: undefined }, registry);
}

function lastComponent(repository: string): string {
  return repository.slice(repository.lastIndexOf('/') + 1);
}

/**
 * The name KOTS pushes an image under (kots `DestImage`): `<host[:port]>[/<namespace>]/<last path
 * component>`, with the tag, or with only the digest when the reference has one (Docker's
 * ParseDockerRef drops the tag of `name:tag@digest`); `:latest` when it had neither. An image
 * already in its exact KOTS name is returned unchanged (normalised).
 */
export function rewriteImageReference(ref: string | ImageReference, registry: LocalRegistry): string {
  const parsed = typeof ref === 'string' ? parseImageReference(ref) : ref;
  const component = lastComponent(parsed.repository);
  return formatImageReference({
    registry: registry.host,
    repository: registry.namespace ? `${registry.namespace}/${component}` : component,
    tag: parsed.digest ? undefined : parsed.tag,
    digest: parsed.digest,
  });
}

/**
 * Maps each reference (as written) to its local name. References already in the local registry
 * are absent from the map: they stay as they are. Two different source images that would land on
 * one local repository+tag are refused, because one of them would silently run the other's code;
 * the same digest twice is the same content and is allowed.
 */
export function planImageRewrites(refs: Iterable<string>, registry: LocalRegistry): Map<string, string> {
  const plan = new Map<string, string>();
  const claims = new Map<string, { source: string; original: string; digest?: string }>();
  for (const original of refs) {
    if (plan.has(original)) continue;
    const parsed = parseImageReference(original);
    if (isKotsLocalName(parsed, registry)) continue;
    const target = parseImageReference(rewriteImageReference(parsed, registry));
    plan.set(original, target.normalized);
    if (target.tag === undefined) continue; // digest-only: content-addressed, nothing contested
    const key = `${target.registry}/${target.repository}:${target.tag}`;
    const source = `${parsed.registry}/${parsed.repository}`;
    const previous = claims.get(key);
    if (!previous) {
      claims.set(key, { source, original, digest: parsed.digest });
    } else if (previous.source !== source && !(previous.digest && previous.digest === parsed.digest)) {
      throw new InvalidInputError(
        `Images "${previous.original}" and "${original}" would both be pushed to "${key}" in the local registry`,
        {
          hint:
            'KOTS keeps only the last path component of an image name, so these two collide. ' +
            'Use a different tag for one of them, or a single source for both.',
        },
      );
    }
  }
  return plan;
}
