// Before installing, ask the local registry whether every rewritten image is there (Registry HTTP
// API v2: HEAD /v2/<repository>/manifests/<tag|digest>). A missing image otherwise surfaces as
// ImagePullBackOff minutes into a helm --wait, far from its cause.
import { MiB, readInputFile } from '../common/read-input.js';
import { PreflightError, UsageError } from '../common/errors.js';
import { parseDockerConfigJson, type Credentials } from '../common/docker-config.js';
import { DOCKER_HUB, parseImageReference, type ImageReference } from '../common/image-reference.js';
import { httpRequest, type HttpResponse } from './registry-http.js';

export interface PreflightOptions {
  /** Contents of a `.dockerconfigjson` (the image pull secret's data). */
  dockerConfigJson?: string;
  /** PEM file with the CA that signed the registry's certificate. */
  caFile?: string;
  /** Hosts (`host` or `host:port`) spoken to over plain HTTP; default: loopback hosts only. */
  plainHttpHosts?: 'loopback' | string[];
  timeoutMs?: number;
  /** Requests in flight at once. */
  concurrency?: number;
}

interface MissingImage {
  image: string;
  /** HTTP status of the last answer. */
  status: number;
  reason: string;
}

export interface PreflightResult {
  present: string[];
  missing: MissingImage[];
}

// Everything a manifest can be: OCI index and manifest, Docker v2 list and manifest.
const MANIFEST_ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export async function checkImagesExist(images: string[], options: PreflightOptions = {}): Promise<PreflightResult> {
  const context = {
    credentials: parseDockerConfigJson(options.dockerConfigJson),
    ca: options.caFile ? [await readCaFile(options.caFile)] : undefined,
    plainHttp: options.plainHttpHosts ?? 'loopback',
    timeoutMs: options.timeoutMs ?? 15_000,
    authorizations: new Map<string, string>(),
  };
  const unique = [...new Set(images)];
  const refs = unique.map((image) => parseImageReference(image));
  const results: (MissingImage | undefined)[] = new Array(refs.length);
  let next = 0;
  const worker = async () => {
    while (next < refs.length) {
      const index = next++;
      results[index] = await checkImage(refs[index]!, context);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  const present: string[] = [];
  const missing: MissingImage[] = [];
  results.forEach((result, i) => (result ? missing.push(result) : present.push(unique[i]!)));
  return { present, missing };
}

type Context = {
  credentials: Map<string, Credentials>;
  ca?: string[];
  plainHttp: 'loopback' | string[];
  timeoutMs: number;
  /** Authorization header values by `host repository` (bearer) or `host` (basic). */
  authorizations: Map<string, string>;
};

async function checkImage(ref: ImageReference, context: Context): Promise<MissingImage | undefined> {
  const host = ref.registry === DOCKER_HUB ? 'registry-1.docker.io' : ref.registry;
  const scheme = usesPlainHttp(ref.registry, context.plainHttp) ? 'http' : 'https';
  const url = new URL(`${scheme}://${host}/v2/${ref.repository}/manifests/${ref.digest ?? ref.tag}`);
  const missing = (status: number, reason: string): MissingImage => ({ image: ref.original, status, reason });

  const head = (authorization?: string) => send(url, 'HEAD', context, authorization, { Accept: MANIFEST_ACCEPT });
  let authorization = context.authorizations.get(`${host} ${ref.repository}`) ?? context.authorizations.get(host);
  let response = await head(authorization);
  if (response.status === 401) {
    const challenge = parseChallenge(String(response.headers['www-authenticate'] ?? ''));
    const credentials = context.credentials.get(ref.registry);
    if (challenge?.scheme === 'basic') {
      if (!credentials) return missing(401, `${ref.registry} requires credentials and the pull secret has none for it`);
      authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
      context.authorizations.set(host, authorization);
    } else if (challenge?.scheme === 'bearer' && challenge.params.realm) {
      const token = await fetchToken(challenge.params, ref.repository, credentials, context);
      if (typeof token !== 'string') return missing(token.status, token.reason);
      authorization = `Bearer ${token}`;
      context.authorizations.set(`${host} ${ref.repository}`, authorization);
    } else {
      return missing(401, `${ref.registry} asks for an authentication scheme this check does not speak`);
    }
    response = await head(authorization);
  }
  // A few registries refuse HEAD on manifests; GET answers the same question.
  if (response.status === 405) response = await send(url, 'GET', context, authorization, { Accept: MANIFEST_ACCEPT });

  switch (response.status) {
    case 200:
      return undefined;
    case 404:
      return missing(404, `not in ${ref.registry} (manifest unknown)`);
    case 401:
    case 403:
      return missing(
        response.status,
        `${ref.registry} refused the credentials of the pull secret (HTTP ${response.status})`,
      );
    default:
      return missing(response.status, `${ref.registry} answered HTTP ${response.status}`);
  }
}

async function fetchToken(
  params: Record<string, string>,
  repository: string,
  credentials: Credentials | undefined,
  context: Context,
): Promise<string | { status: number; reason: string }> {
  const url = new URL(params.realm!);
  if (params.service) url.searchParams.set('service', params.service);
  url.searchParams.set('scope', params.scope ?? `repository:${repository}:pull`);
  const authorization = credentials
    ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`
    : undefined;
  const response = await send(url, 'GET', context, authorization, { Accept: 'application/json' });
  if (response.status === 401 || response.status === 403) {
    return {
      status: response.status,
      reason: `the token service ${url.host} refused the credentials of the pull secret`,
    };
  }
  if (response.status !== 200) {
    return { status: response.status, reason: `the token service ${url.host} answered HTTP ${response.status}` };
  }
  try {
    const body = JSON.parse(response.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
    const token = body.token ?? body.access_token;
    if (typeof token === 'string' && token !== '') return token;
  } catch {
    // fall through
  }
  return { status: response.status, reason: `the token service ${url.host} sent no token` };
}

async function send(
  url: URL,
  method: 'GET' | 'HEAD',
  context: Context,
  authorization: string | undefined,
  headers: Record<string, string>,
): Promise<HttpResponse> {
  try {
    return await httpRequest({
      url,
      method,
      headers: { ...headers, ...(authorization ? { Authorization: authorization } : {}) },
      ...(context.ca ? { ca: context.ca } : {}),
      timeoutMs: context.timeoutMs,
    });
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    const detail = cause.code ? `${cause.code}: ${cause.message}` : cause.message;
    throw new PreflightError(`Cannot reach the registry ${url.host} (${url.origin}): ${detail}`, {
      hint: unreachableHint(cause),
      cause,
    });
  }
}

function unreachableHint(cause: NodeJS.ErrnoException): string {
  const code = cause.code ?? '';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code)) {
    return "The registry's certificate is not trusted: give the CA that signed it (caFile).";
  }
  if (code === 'EPROTO' || /wrong version number|packet length too long/.test(cause.message)) {
    return 'The registry does not speak HTTPS here: if it serves plain HTTP, list it in plainHttpHosts.';
  }
  return 'Check the local registry address and that the registry is running and reachable from this pod.';
}

function usesPlainHttp(registry: string, plainHttp: 'loopback' | string[]): boolean {
  if (plainHttp !== 'loopback') {
    const host = hostWithoutPort(registry);
    return plainHttp.some((h) => h.toLowerCase() === registry || h.toLowerCase() === host);
  }
  const host = hostWithoutPort(registry);
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function hostWithoutPort(registry: string): string {
  return registry.startsWith('[') ? registry.slice(0, registry.indexOf(']') + 1) : registry.replace(/:\d+$/, '');
}

/** `Basic realm="x"` / `Bearer realm="…",service="…",scope="…"` (quoted values may hold commas). */
export function parseChallenge(header: string): { scheme: string; params: Record<string, string> } | undefined {
  const match = /^\s*([A-Za-z]+)\s*(.*)$/s.exec(header);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  const pattern = /([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = match[2] ?? '';
  let param: RegExpExecArray | null;
  while ((param = pattern.exec(rest)) !== null && param[0] !== '') {
    params[param[1]!.toLowerCase()] = param[2] !== undefined ? param[2].replace(/\\(.)/g, '$1') : (param[3] ?? '');
  }
  return { scheme: match[1]!.toLowerCase(), params };
}

async function readCaFile(file: string): Promise<string> {
  try {
    return readInputFile(file, {
      what: 'registry CA file',
      maxBytes: MiB,
      hint: 'Mount the CA certificate (PEM) and give its path.',
    });
  } catch (error) {
    throw new UsageError(`Cannot read the registry CA file ${file}: ${(error as Error).message}`, {
      file,
      hint: 'Mount the CA certificate (PEM) and give its path (--registry-ca-file / HELM_INSTALLER_REGISTRY_CA_FILE).',
    });
  }
}
