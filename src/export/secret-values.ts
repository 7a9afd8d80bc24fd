// The customer's secret values, apart from the rest of their values. The vendor's render (base/)
// must not depend on the customer, but many charts refuse to render without a password
// (`required`), and their Secrets only ever go to secrets/: so the vendor's render gets the
// customer's secret-looking values (and nothing else of theirs) as one extra layer each.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SetArgument } from '../helm/helm-args.js';
import { maskSetArgument } from '../options/set-expressions.js';
import { MASK, type SecretRegistry } from '../common/secrets.js';
import { readValuesFile } from '../inputs/values.js';

/** Pure: the subtree of `tree` whose leaves the registry masks (a secret-looking key, or a known secret). */
export function secretSubtree(tree: unknown, masked: unknown): unknown {
  if (Array.isArray(tree) && Array.isArray(masked)) {
    // A list is replaced whole by helm: kept whole when any item is secret.
    return tree.some((t, i) => secretSubtree(t, masked[i]) !== undefined) ? tree : undefined;
  }
  if (isMap(tree) && isMap(masked)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(tree)) {
      const kept = secretSubtree(v, masked[k]);
      if (kept !== undefined) out[k] = kept;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return masked === MASK && tree !== MASK ? tree : undefined;
}

/** Pure: dotted paths of the secret leaves (`database.password`), for the facts and the README. */
export function secretPaths(tree: unknown, masked: unknown, path = ''): string[] {
  if (isMap(tree) && isMap(masked))
    return Object.entries(tree).flatMap(([k, v]) => secretPaths(v, masked[k], path ? `${path}.${k}` : k));
  if (Array.isArray(tree) && Array.isArray(masked))
    return tree.flatMap((t, i) => secretPaths(t, masked[i], `${path}[${i}]`));
  return masked === MASK && tree !== MASK ? [path] : [];
}

/** One JSON layer (JSON is YAML) per customer file that holds secrets, written into `dir`. */
export function writeSecretLayers(files: string[], secrets: SecretRegistry, dir: string): string[] {
  const layers: string[] = [];
  for (const [i, file] of files.entries()) {
    const tree = readValuesFile(file, secrets);
    const kept = secretSubtree(tree, secrets.maskTree(tree));
    if (kept === undefined) continue;
    const layer = join(dir, `customer-secrets-${i}.json`);
    writeFileSync(layer, JSON.stringify(kept), { mode: 0o600 });
    layers.push(layer);
  }
  return layers;
}

/** The --set arguments that carry a secret (helm's --set syntax is kept whole, not re-parsed). */
export function secretSets(sets: SetArgument[], secrets: SecretRegistry): SetArgument[] {
  return sets.filter((s) => maskSetArgument(s.kind, s.expression, secrets) !== s.expression);
}

export function secretValuePaths(files: string[], secrets: SecretRegistry): string[] {
  return [
    ...new Set(
      files.flatMap((file) => {
        const tree = readValuesFile(file, secrets);
        return secretPaths(tree, secrets.maskTree(tree));
      }),
    ),
  ].sort();
}

function isMap(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
