// Secret handling: which keys look secret, and masking their values wherever text is emitted
// (logs, helm's echoed output, summaries, termination messages).

const SECRET_KEY =
  /(pass(word|wd|phrase)?|secret|token|api[-_]?key|private[-_]?key|credential|auth|dockerconfigjson|license[-_]?key)/i;
export const MASK = '[REDACTED]';

// Keys that NAME a secret rather than hold one: `existingSecret: my-db`, `imagePullSecrets`,
// `secretName`, `passwordKey` (which key of a Secret to read). Masking them hides causes.
const SECRET_REFERENCE =
  /existing|^use(password|secret|auth|token)|(secret|password|token|credentials?|auth)s?(name|names|ref|keyref|file|path|filename|mountpath|key|keys)$|^(image)?pullsecrets?$|secretkeyref|^secretkeys$|^(kind|type)$|(envvars|env|certificates?|certs|scripts|configuration|config|tls|passwords|objstore)secrets?$|^name$|(selector|annotations|labels)$/i;
// Maps whose every leaf is secret material (`auth: {user, password}`, argo-cd's `secret:`). Any
// other secret-looking key holding a map (`authProxy:`) has its leaves judged by their own keys,
// or its image and resources would be masked too.
const SECRET_CONTAINER = /^(auth|credentials?|secrets?|passwords?|tokens?|.*(secrets|credentials|passwords|tokens))$/i;
// ...except where the "key" suffix is the secret itself (S3's secretKey, an API key).
const SECRET_ITSELF = /^(secret|private|api|access|encryption|signing|license|master|client)[-_]?key$/i;

export function isSecretKey(key: string): boolean {
  if (SECRET_ITSELF.test(key)) return true;
  return SECRET_KEY.test(key) && !SECRET_REFERENCE.test(key);
}

/** A key that names a secret (its value stays readable, even under a secret-looking map). */
export function isSecretReference(key: string): boolean {
  return SECRET_REFERENCE.test(key) && !SECRET_ITSELF.test(key);
}

/** Whether the value under `key` is secret, given whether its parent map is. */
function childIsSecret(key: string, value: unknown, underSecret: boolean): boolean {
  if (isSecretReference(key)) return false;
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return underSecret || (isSecretKey(key) && SECRET_CONTAINER.test(key));
  return underSecret || isSecretKey(key);
}

/** A set of literal secret values to mask in free text, filled as values layers are read. */
export class SecretRegistry {
  private readonly values = new Set<string>();

  add(value: unknown): void {
    // Very short values would mask ordinary words ("no", "1"); they are still redacted by key.
    if (typeof value === 'string' && value.length >= 4) this.values.add(value);
    else if (typeof value === 'number' && String(value).length >= 4) this.values.add(String(value));
  }

  /** Collect the values under secret-looking keys, at any depth. */
  collectFrom(tree: unknown, underSecret = false): void {
    if (Array.isArray(tree)) {
      for (const item of tree) this.collectFrom(item, underSecret);
    } else if (tree !== null && typeof tree === 'object') {
      for (const [k, v] of Object.entries(tree)) this.collectFrom(v, childIsSecret(k, v, underSecret));
    } else if (underSecret) {
      this.add(tree);
    }
  }

  maskText(text: string): string {
    let out = text;
    // Longest first, so a secret containing another is masked whole.
    for (const v of [...this.values].sort((a, b) => b.length - a.length)) out = out.split(v).join(MASK);
    return out;
  }

  /** Deep copy with every leaf under a secret-looking key, and every known secret string, masked. */
  maskTree(tree: unknown, underSecret = false): unknown {
    if (Array.isArray(tree)) return tree.map((t) => this.maskTree(t, underSecret));
    if (tree !== null && typeof tree === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(tree)) out[k] = this.maskTree(v, childIsSecret(k, v, underSecret));
      return out;
    }
    // true/false under `auth:` say whether auth is on: never a secret, and useful to read.
    if (underSecret && tree !== null && tree !== undefined && tree !== '' && typeof tree !== 'boolean') return MASK;
    return typeof tree === 'string' ? this.maskText(tree) : tree;
  }
}

/**
 * Every credential in a .dockerconfigjson, base64 `auth` and its decoded password included. Here,
 * not with the registry preflight: the option parser registers them for every run, and loading
 * the airgap modules for that cost each unchanged redeploy their load.
 */
export function registerPullSecret(text: string, secrets: SecretRegistry): void {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // The preflight reports the format error; mask every quoted string that could be a credential.
    for (const m of text.matchAll(/"(auth|password|identitytoken|registrytoken)"\s*:\s*"([^"]*)"/gi)) secrets.add(m[2]);
    return;
  }
  secrets.collectFrom(data);
  const walk = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node)) {
      if (k === 'auth' && typeof v === 'string') {
        const decoded = Buffer.from(v, 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon >= 0) secrets.add(decoded.slice(colon + 1));
        secrets.add(decoded);
      } else walk(v);
    }
  };
  walk(data);
}
