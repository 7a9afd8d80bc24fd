// Splits a values layer into what may be read in a ConfigMap and what must go to the Secret.
// Flux merges valuesFrom in order, maps deeply and everything else (lists too) replaced whole, as
// helm merges `-f` files; so the plain part and the secret part, merged back, give the layer
// exactly. A secret inside a list takes the whole list with it: half a list cannot be merged back.
import { InvalidInputError } from '../../common/errors.js';
import type { SecretRegistry } from '../../common/secrets.js';
import type { ValuePath, Values } from './input.js';

export interface SplitValues {
  plain: Values;
  secret: Values;
}

type Tree = Record<string, unknown>;

const isMap = (v: unknown): v is Tree => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Pure: the layer's plain part and its secret part (empty maps when there is none). */
export function splitValues(values: Values, secretPaths: readonly ValuePath[]): SplitValues {
  const plain = structuredClone(values);
  const secret: Tree = {};
  for (const path of secretPaths) moveToSecret(plain, secret, mapPrefix(values, path));
  return { plain, secret };
}

/** The path up to the first list (or the whole path): what can be moved out and merged back. None: not in this layer. */
function mapPrefix(values: Values, path: ValuePath): string[] {
  const keys: string[] = [];
  let node: unknown = values;
  for (const [i, step] of path.entries()) {
    if (!isMap(node) || typeof step !== 'string' || !(step in node)) return [];
    keys.push(step);
    node = node[step];
    if (Array.isArray(node) && i < path.length - 1) return keys;
  }
  return keys;
}

function moveToSecret(plain: Tree, secret: Tree, keys: string[]): void {
  if (keys.length === 0) return;
  const parents: Tree[] = [plain];
  for (const key of keys.slice(0, -1)) {
    const next = parents.at(-1)![key];
    if (!isMap(next)) return; // already moved with an enclosing value
    parents.push(next);
  }
  const last = keys.at(-1)!;
  const holder = parents.at(-1)!;
  if (!(last in holder)) return;
  let target = secret;
  for (const key of keys.slice(0, -1)) target = (isMap(target[key]) ? target[key] : (target[key] = {})) as Tree;
  target[last] = holder[last];
  delete holder[last];
  // Maps left empty by the move go too: the secret part brings them back.
  for (let i = parents.length - 1; i > 0 && Object.keys(parents[i]!).length === 0; i--)
    delete parents[i - 1]![keys[i - 1]!];
}

/**
 * The paths of the values our masking hides (a secret-looking key, or a known secret string inside
 * a longer one), found by masking a copy with the run's SecretRegistry: the same judgement as
 * every log line, without a second list of what looks secret.
 */
export function secretValuePaths(values: Values, secrets: SecretRegistry): ValuePath[] {
  const paths: ValuePath[] = [];
  const walk = (original: unknown, masked: unknown, path: ValuePath): void => {
    if (Array.isArray(original) && Array.isArray(masked)) original.forEach((v, i) => walk(v, masked[i], [...path, i]));
    else if (isMap(original) && isMap(masked))
      for (const [k, v] of Object.entries(original)) walk(v, masked[k], [...path, k]);
    else if (original !== masked) paths.push(path);
  };
  walk(values, secrets.maskTree(values), []);
  return paths;
}

/** Throws (exit 3) on a value that a ConfigMap's YAML, read by Flux as JSON, cannot carry. */
export function checkExpressible(
  values: unknown,
  where: { release: string; layer: string },
  path: ValuePath = [],
): void {
  const fail = (why: string): never => {
    const key = path.map(String).join('.');
    throw new InvalidInputError(
      `release ${where.release}: the ${where.layer} value at ${key || '(top)'} cannot be written in the HelmRelease form: ${why}`,
      {
        key,
        hint: 'Flux reads values as JSON: use a string, a finite number, true/false, null, a list or a map there, or export --format rendered.',
      },
    );
  };
  if (values === null || typeof values === 'string' || typeof values === 'boolean') return;
  if (typeof values === 'number') return Number.isFinite(values) ? undefined : fail(`${values} is not a JSON number`);
  if (Array.isArray(values)) return values.forEach((v, i) => checkExpressible(v, where, [...path, i]));
  if (isMap(values) && Object.getPrototypeOf(values) === Object.prototype) {
    for (const [k, v] of Object.entries(values)) checkExpressible(v, where, [...path, k]);
    return;
  }
  fail(
    `a ${values === undefined ? 'missing value' : typeof values === 'object' ? (values.constructor?.name ?? 'object') : typeof values}`,
  );
}
