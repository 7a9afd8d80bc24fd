// Secrets in a plan: each secret value is replaced, on both sides, by a marker that says only
// whether it changed, so the diff still shows a secret changing (helm-diff's default) but never
// the value, its length or a hash of it (equality is decided here, on the real values).
//
// Masked (the drift check's rules, src/drift/compare-objects.ts isSecretPath, so a drift report
// and a plan agree): every value of a Secret's `data` and `stringData`; every value under a
// secret-looking key (src/common/secrets.ts isSecretKey: `password`, `DB_PASSWORD`, `apiKey`, `auth`,
// ... in any object, a ConfigMap's data included); every field of a list item named like a
// secret (`env: [{name: DB_PASSWORD, value: ...}]`); kubectl's last-applied annotation.
// Readable under those, as the `values` command's masking has them (src/common/secrets.ts
// isSecretReference): keys that name a secret rather than hold one, and what is under them (an
// item's `name`, `secretKeyRef`, `secretName`, `existingSecret`), except under a Secret's data
// and the last-applied annotation, where everything is masked.
// NOT masked: a secret inside a value under an ordinary key (a ConfigMap's `app.properties`
// holding `db.password=...`, a connection URL with a password in it), references to secrets
// elsewhere, a Secret's metadata (name, labels, type), and a boolean (a switch such as
// `automountServiceAccountToken`) anywhere but under a Secret's data.
// Pure.
import { isSecretPath } from '../drift/compare-objects.js';
import { sameJson } from '../drift/managed-fields.js';
import { isSecretKey, isSecretReference } from '../common/secrets.js';
import { isMap, LAST_APPLIED, own } from './clean-object.js';
import type { Obj } from './plan-types.js';

const SECRET = '(secret)';
const SECRET_UNCHANGED = '(secret, unchanged)';
const SECRET_CHANGED = '(secret, changed)';
const SECRET_ADDED = '(secret, added)';
const SECRET_REMOVED = '(secret, removed)';

interface Context {
  kind: string;
  live: Obj | undefined;
  desired: Obj | undefined;
  /** A create, a delete or a hook: there is nothing to compare with, every secret is just '(secret)'. */
  oneSided: boolean;
}

/** Where the walk is: under a Secret's data or the last-applied annotation (all masked), or under a key that names a secret (readable). */
interface Scope {
  strict: boolean;
  reference: boolean;
}

/**
 * Copies of both sides with every secret value replaced by a marker: equal values become
 * '(secret, unchanged)' on both sides; differing ones '(secret)' in live and '(secret, changed)'
 * in desired; one present on a side only '(secret, added)' / '(secret, removed)'. With one side
 * undefined (create, delete, hook) the other's secrets become '(secret)'.
 */
export function maskPair(kind: string, live: Obj | undefined, desired: Obj | undefined): { live?: Obj; desired?: Obj } {
  const ctx: Context = { kind, live, desired, oneSided: live === undefined || desired === undefined };
  const [l, d] = walk(live, desired, [], { strict: false, reference: false }, ctx);
  return { ...(l === undefined ? {} : { live: l as Obj }), ...(d === undefined ? {} : { desired: d as Obj }) };
}

function walk(live: unknown, desired: unknown, at: string[], scope: Scope, ctx: Context): [unknown, unknown] {
  if (bothOr(isMap, live, desired))
    return walkMaps(live as Obj | undefined, desired as Obj | undefined, at, scope, ctx);
  if (bothOr(Array.isArray, live, desired))
    return walkLists(live as unknown[] | undefined, desired as unknown[] | undefined, at, scope, ctx);
  // A switch is never secret material (`automountServiceAccountToken: false`, `auth: true`)
  // outside a Secret's data, where every value is.
  const switches =
    typeof live !== 'object' &&
    typeof desired !== 'object' &&
    [live, desired].every((v) => v === undefined || typeof v === 'boolean');
  const secret = scope.strict || (!scope.reference && !switches && isSecretPath(ctx.kind, at, ctx.live, ctx.desired));
  return secret ? markers(live, desired, ctx.oneSided) : [live, desired];
}

/** The scope under map key `key` of the node at `at`. */
function enter(scope: Scope, at: string[], key: string, ctx: Context): Scope {
  const strict =
    scope.strict ||
    key === LAST_APPLIED ||
    (ctx.kind === 'Secret' && at.length === 0 && (key === 'data' || key === 'stringData'));
  if (strict) return { strict, reference: false };
  // A reference under something secret (any child of `at` would be secret: the '' probe) stays
  // readable, until a secret-looking key below it (`existingSecret: {password: ...}`).
  if (isSecretReference(key) && isSecretPath(ctx.kind, [...at, ''], ctx.live, ctx.desired))
    return { strict, reference: true };
  return { strict, reference: scope.reference && !isSecretKey(key) };
}

/** Both sides pass `test`, or one does and the other is absent (a map the change adds or removes: its leaves are judged one by one). */
function bothOr(test: (v: unknown) => boolean, a: unknown, b: unknown): boolean {
  return (test(a) || a === undefined) && (test(b) || b === undefined) && !(a === undefined && b === undefined);
}

function walkMaps(
  live: Obj | undefined,
  desired: Obj | undefined,
  at: string[],
  scope: Scope,
  ctx: Context,
): [unknown, unknown] {
  const pairs = new Map<string, [unknown, unknown]>();
  for (const key of new Set([...Object.keys(live ?? {}), ...Object.keys(desired ?? {})])) {
    pairs.set(key, walk(own(live, key), own(desired, key), [...at, key], enter(scope, at, key, ctx), ctx));
  }
  // Each side keeps its own key order: the diff then shows only real changes.
  const side = (o: Obj | undefined, i: 0 | 1): Obj | undefined =>
    o && Object.fromEntries(Object.keys(o).map((k) => [k, pairs.get(k)![i]]));
  return [side(live, 0), side(desired, 1)];
}

function walkLists(
  live: unknown[] | undefined,
  desired: unknown[] | undefined,
  at: string[],
  scope: Scope,
  ctx: Context,
): [unknown, unknown] {
  const l: unknown[] = [];
  const d: unknown[] = [];
  for (let i = 0; i < Math.max(live?.length ?? 0, desired?.length ?? 0); i++) {
    const [a, b] = walk(live?.[i], desired?.[i], [...at, String(i)], scope, ctx);
    if (live && i < live.length) l.push(a);
    if (desired && i < desired.length) d.push(b);
  }
  return [live && l, desired && d];
}

function markers(live: unknown, desired: unknown, oneSided: boolean): [unknown, unknown] {
  const present = (v: unknown) => v !== undefined;
  if (oneSided) return [present(live) ? SECRET : undefined, present(desired) ? SECRET : undefined];
  if (!present(live)) return [undefined, SECRET_ADDED];
  if (!present(desired)) return [SECRET_REMOVED, undefined];
  return sameJson(live, desired) ? [SECRET_UNCHANGED, SECRET_UNCHANGED] : [SECRET, SECRET_CHANGED];
}
