// --set, --set-string and --set-json expressions, checked before helm sees them and searched for
// secrets: a value under a secret-looking key, or a secret inside JSON (--set-json, or JSON given
// to --set), is registered so that every later echo of it (helm's error text, debug argv, the
// termination message) is masked. Only the structure helm would refuse anyway is checked here;
// helm stays the judge of the rest of its syntax.
import type { SetArgument, SetKind } from '../helm/helm-args.js';
import { type ParseContext } from './options.js';
import { OptionValueError } from '../common/errors.js';
import { isSecretKey, MASK, type SecretRegistry } from '../common/secrets.js';

/** Past this an expression belongs in a values file (argv and env strings stop at 128 KiB anyway). */
const MAX_SET_EXPRESSION_BYTES = 64 * 1024;
/** Helm's own bound on a list index in --set (strvals' MaxIndex). */
const MAX_SET_INDEX = 65536;
/** JSON nesting beyond this is refused (a depth bomb would otherwise exhaust the stack). */
const MAX_JSON_DEPTH = 64;

interface SetPair {
  key: string;
  value: string;
}

/** A parser for one kind of --set expression, for the options table. */
export function setExpression(kind: SetKind) {
  return (raw: string, ctx: ParseContext): SetArgument => parseSetArgument(kind, raw, ctx.secrets);
}

function parseSetArgument(kind: SetKind, expression: string, secrets: SecretRegistry): SetArgument {
  if (Buffer.byteLength(expression) > MAX_SET_EXPRESSION_BYTES) {
    throw new OptionValueError(
      `the expression is over ${MAX_SET_EXPRESSION_BYTES / 1024} KiB: put such values in a values file (--values)`,
    );
  }
  const pairs = kind === 'set-json' ? splitJsonPairs(expression) : splitSetPairs(expression);
  // Secrets first: a later structural error must not echo a value that was already recognised.
  for (const p of pairs) registerPairSecrets(kind, p, secrets);
  for (const p of pairs) checkPair(kind, p);
  return { kind, expression };
}

/** For messages and debug argv: the expression with every secret value replaced by [REDACTED]. */
export function maskSetArgument(kind: SetKind, expression: string, secrets: SecretRegistry): string {
  let pairs: SetPair[];
  try {
    pairs = kind === 'set-json' ? splitJsonPairs(expression) : splitSetPairs(expression);
  } catch {
    // Unparseable: show no value at all rather than risk one.
    const eq = expression.indexOf('=');
    return eq < 0 ? secrets.maskText(expression) : `${secrets.maskText(expression.slice(0, eq))}=${MASK}`;
  }
  return pairs
    .map((p) => {
      if (!p.key && !p.value) return '';
      if (isSecretKey(lastSegment(p.key))) return `${p.key}=${MASK}`;
      const json = tryJson(p.value);
      if (json.ok && typeof json.value === 'object' && json.value !== null) {
        return `${p.key}=${JSON.stringify(secrets.maskTree(json.value))}`;
      }
      return `${p.key}=${secrets.maskText(p.value)}`;
    })
    .join(',');
}

function registerPairSecrets(kind: SetKind, p: SetPair, secrets: SecretRegistry): void {
  const secretKey = isSecretKey(lastSegment(p.key));
  const json = tryJson(p.value);
  if (json.ok) {
    secrets.collectFrom(json.value, secretKey);
    if (secretKey && typeof json.value !== 'object') secrets.add(p.value);
  } else if (kind === 'set-json') {
    // Invalid JSON still may hold a secret: take string literals after secret-looking keys.
    for (const m of p.value.matchAll(/"([^"\\]*)"\s*:\s*"((?:[^"\\]|\\.)*)"/g))
      if (isSecretKey(m[1]!)) secrets.add(m[2]);
    if (secretKey) secrets.add(p.value);
  } else if (secretKey) {
    secrets.add(p.value);
    // helm's list syntax {a,b}: each element is a value of its own in helm's echoes.
    const list = /^\{(.*)\}$/s.exec(p.value);
    if (list) for (const item of list[1]!.split(',')) secrets.add(item.trim());
    // helm prints --set-string values unquoted, --set values as it parsed them.
    secrets.add(p.value.replace(/\\(.)/g, '$1'));
  }
}

function checkPair(kind: SetKind, p: SetPair): void {
  if (p.key === '') throw new OptionValueError(`expected key=value (helm syntax: a.b=c, lists as a[0]=x)`);
  for (const m of p.key.matchAll(/\[(\d+)\]/g)) {
    if (Number(m[1]) > MAX_SET_INDEX)
      throw new OptionValueError(`list index ${m[1]} in "${p.key}" is over helm's limit of ${MAX_SET_INDEX}`);
  }
  if (kind === 'set-json') {
    const json = tryJson(p.value);
    if (!json.ok) throw new OptionValueError(`the value of "${p.key}" is not valid JSON (${json.error})`);
  }
}

function lastSegment(key: string): string {
  const parts = key.replace(/\[\d+\]/g, '').split(/(?<!\\)\./);
  return parts.at(-1) ?? key;
}

/** helm's --set: comma-separated key=value pairs; `\,` escapes, `{a,b}` is a list. */
function splitSetPairs(expression: string): SetPair[] {
  const pairs: SetPair[] = [];
  let current = '';
  let depth = 0;
  for (let i = 0; i < expression.length; i += 1) {
    const c = expression[i]!;
    if (c === '\\' && i + 1 < expression.length) {
      current += c + expression[i + 1];
      i += 1;
    } else if (c === '{') {
      depth += 1;
      current += c;
    } else if (c === '}') {
      depth = Math.max(0, depth - 1);
      current += c;
    } else if (c === ',' && depth === 0) {
      pairs.push(toPair(current));
      current = '';
    } else {
      current += c;
    }
  }
  pairs.push(toPair(current));
  return pairs;
}

function toPair(text: string): SetPair {
  const eq = text.search(/(?<!\\)=/);
  if (eq < 0) {
    if (text.trim() === '') throw new OptionValueError('an empty key=value pair (a stray comma?)');
    throw new OptionValueError(`key "${text.slice(0, 60)}" has no value (expected key=value)`);
  }
  return { key: text.slice(0, eq), value: text.slice(eq + 1) };
}

/** helm's --set-json: key=<JSON>[,key=<JSON>...]; the end of each JSON value is found by scanning. */
function splitJsonPairs(expression: string): SetPair[] {
  const pairs: SetPair[] = [];
  let i = 0;
  while (i < expression.length) {
    const eq = expression.indexOf('=', i);
    if (eq < 0) throw new OptionValueError(`key "${expression.slice(i, i + 60)}" has no value (expected key=<JSON>)`);
    const key = expression.slice(i, eq);
    const end = jsonValueEnd(expression, eq + 1);
    pairs.push({ key, value: expression.slice(eq + 1, end) });
    if (end < expression.length && expression[end] !== ',') {
      throw new OptionValueError(`the value of "${key}" is not valid JSON (unexpected text after it)`);
    }
    i = end + 1;
  }
  return pairs;
}

/** Index just past the JSON value starting at `start` (or the next top-level comma for scalars). */
function jsonValueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      depth += 1;
      if (depth > MAX_JSON_DEPTH) throw new OptionValueError(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    } else if (c === '}' || c === ']') {
      depth -= 1;
      if (depth === 0) return i + 1;
    } else if (c === ',' && depth === 0) return i;
  }
  return text.length;
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const t = text.trim();
  // Plain words are not JSON for --set; numbers, booleans and quoted strings are fine either way.
  if (t === '') return { ok: false, error: 'empty' };
  try {
    let depth = 0;
    let max = 0;
    let inString = false;
    for (let i = 0; i < t.length; i += 1) {
      const c = t[i];
      if (inString) {
        if (c === '\\') i += 1;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') max = Math.max(max, ++depth);
      else if (c === '}' || c === ']') depth -= 1;
    }
    if (max > MAX_JSON_DEPTH) return { ok: false, error: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    return { ok: true, value: JSON.parse(t) };
  } catch (err) {
    // V8's message quotes the input, which may be a secret: keep only the position.
    const at = /position (\d+)/.exec((err as Error).message);
    return { ok: false, error: at ? `syntax error at position ${at[1]}` : 'syntax error' };
  }
}

/**
 * Masks the value of `--set`-style arguments whose key looks secret: `a.password=x` -> `a.password=[REDACTED]`,
 * and secrets inside JSON values. Registers what it finds.
 */
export function maskSetExpression(expr: string, secrets: SecretRegistry, kind: SetKind = 'set'): string {
  try {
    parseSetArgument(kind, expr, secrets);
  } catch {
    // Invalid expressions are refused elsewhere; what could be found is registered by now.
  }
  return maskSetArgument(kind, expr, secrets);
}
