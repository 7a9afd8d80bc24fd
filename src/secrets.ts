// Secret handling: which keys look secret, and masking their values wherever text is emitted
// (logs, helm's echoed output, summaries, termination messages).

const SECRET_KEY = /(pass(word|wd|phrase)?|secret|token|api[-_]?key|private[-_]?key|credential|auth|dockerconfigjson|license[-_]?key)/i;
export const MASK = '[REDACTED]';

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
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
      for (const [k, v] of Object.entries(tree)) this.collectFrom(v, underSecret || isSecretKey(k));
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
      for (const [k, v] of Object.entries(tree)) out[k] = this.maskTree(v, underSecret || isSecretKey(k));
      return out;
    }
    if (underSecret && tree !== null && tree !== undefined && tree !== '') return MASK;
    return typeof tree === 'string' ? this.maskText(tree) : tree;
  }
}

/**
 * Masks the value of `--set`-style arguments whose key looks secret: `a.password=x` -> `a.password=[REDACTED]`.
 * Helm's --set takes comma-separated pairs; each pair is checked.
 */
export function maskSetExpression(expr: string, secrets: SecretRegistry): string {
  return expr
    .split(/,(?=[^,=]+=)/)
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      const key = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (isSecretKey(key)) {
        secrets.add(value);
        return `${key}=${MASK}`;
      }
      return pair;
    })
    .join(',');
}
