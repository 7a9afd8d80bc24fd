// The registry credentials of a pull secret (`.dockerconfigjson`), by registry host: read while
// the options are resolved (--image-pull-secret-file) and used by the registry preflight.
import { InvalidInputError } from './errors.js';
import { DOCKER_HUB } from './image-reference.js';

export interface Credentials {
  username: string;
  password: string;
}

const DOCKER_HUB_KEYS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/**
 * Credentials by registry host from a `.dockerconfigjson` (`{"auths": {...}}`, or the legacy
 * `.dockercfg` map). Keys may be `host`, `https://host/v1/` and so on. Nothing of the content
 * goes into an error message: it is a secret.
 */
export function parseDockerConfigJson(json: string | undefined): Map<string, Credentials> {
  const credentials = new Map<string, Credentials>();
  if (json === undefined || json.trim() === '') return credentials;
  const fail = (what: string) =>
    new InvalidInputError(`The pull secret's .dockerconfigjson ${what}`, {
      hint:
        'Create it with kubectl create secret docker-registry, or check the JSON shape ' +
        '{"auths": {"<host>": {"auth": "<base64 of user:password>"}}}.',
    });
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw fail('is not valid JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw fail('is not a JSON object');
  const auths = ('auths' in data ? (data as { auths: unknown }).auths : data) as Record<string, unknown>;
  if (typeof auths !== 'object' || auths === null || Array.isArray(auths)) throw fail('has no "auths" map');
  for (const [key, entry] of Object.entries(auths)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { auth, username, password } = entry as Record<string, unknown>;
    let user: string | undefined;
    let pass: string | undefined;
    if (typeof auth === 'string' && auth !== '') {
      const decoded = Buffer.from(auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon === -1) throw fail(`has an "auth" for ${registryKey(key)} that is not base64 of user:password`);
      user = decoded.slice(0, colon);
      pass = decoded.slice(colon + 1);
    } else if (typeof username === 'string' && typeof password === 'string') {
      user = username;
      pass = password;
    }
    if (user !== undefined && pass !== undefined) credentials.set(registryKey(key), { username: user, password: pass });
  }
  return credentials;
}

function registryKey(key: string): string {
  const host = key
    .trim()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
    .split('/')[0]!
    .toLowerCase();
  return DOCKER_HUB_KEYS.has(host) ? DOCKER_HUB : host;
}
