// One-line scalars and flow collections of the fast YAML reader (fast-yaml.ts): quoted scalars
// (a double-quoted one may run over lines, as CRD descriptions do) and `{...}` / `[...]` on one
// line. Pure functions of the text and a position, building the library's nodes or throwing
// UNSUPPORTED, as the reader's own methods do.
import type { Node, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import {
  blankOrEnd,
  collection,
  decodeEscapes,
  foldQuoted,
  HASH,
  lineEnd,
  MAP_PROTO,
  NL,
  pair,
  resolvePlain,
  scalar,
  SEQ_PROTO,
  SPACE,
  TAB,
  UNSUPPORTED,
} from './fast-yaml-nodes.js';

/** The closing quote of a quoted scalar opened at `p`, on the same line; -1 if none. */
export function closingQuote(s: string, p: number): number {
  const end = lineEnd(s, p);
  if (s[p] === "'") {
    for (let i = s.indexOf("'", p + 1); i !== -1 && i < end; i = s.indexOf("'", i + 2)) {
      if (s[i + 1] !== "'") return i;
    }
    return -1;
  }
  for (let i = s.indexOf('"', p + 1); i !== -1 && i < end; i = s.indexOf('"', i + 1)) {
    let backslashes = 0;
    while (s[i - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return i;
  }
  return -1;
}

export function quoted(s: string, p: number): Scalar {
  let close = closingQuote(s, p);
  if (close === -1) {
    // go-yaml's rule: a quoted scalar runs to its closing quote, whatever the indentation of its
    // continuation lines (helm 4 writes the closing quote at column 0).
    if (s[p] === '"') return multiLineDoubleQuoted(s, p);
    for (close = s.indexOf("'", p + 1); close !== -1 && s[close + 1] === "'"; close = s.indexOf("'", close + 2));
    if (close === -1) throw UNSUPPORTED;
    const value = foldQuoted(s.slice(p + 1, close)).replaceAll("''", "'");
    return scalar(value, 'QUOTE_SINGLE', p, close + 1, value);
  }
  const raw = s.slice(p + 1, close);
  if (s[p] === "'") {
    const value = raw.includes("''") ? raw.replaceAll("''", "'") : raw;
    return scalar(value, 'QUOTE_SINGLE', p, close + 1, value);
  }
  const value = raw.includes('\\') ? decodeEscapes(raw) : raw;
  return scalar(value, 'QUOTE_DOUBLE', p, close + 1, value);
}

/**
 * A double-quoted scalar over several lines (long descriptions, as CRDs have them): folded as a
 * single-quoted one is, then its escapes read line by line. An escape that touches the folding
 * (a `\` before a line break or a blank, which joins lines or keeps a blank the fold would drop)
 * is left to the library.
 */
function multiLineDoubleQuoted(s: string, p: number): Scalar {
  let close = s.indexOf('"', p + 1);
  for (; close !== -1; close = s.indexOf('"', close + 1)) {
    let backslashes = 0;
    while (s[close - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) break;
  }
  if (close === -1) throw UNSUPPORTED;
  const raw = s.slice(p + 1, close);
  let value = foldQuoted(raw);
  if (raw.includes('\\')) {
    if (/\\[ \t\n]/.test(raw.replaceAll('\\\\', ''))) throw UNSUPPORTED; // an escaped backslash is no escape
    value = value.split('\n').map(decodeEscapes).join('\n');
  }
  return scalar(value, 'QUOTE_DOUBLE', p, close + 1, value);
}

/** A flow collection that opens at `p` and closes on the same line. */
export function flow(s: string, p: number): YAMLMap | YAMLSeq {
  const isMap = s[p] === '{';
  const close = isMap ? '}' : ']';
  const node = isMap ? collection<YAMLMap>(MAP_PROTO, p, true) : collection<YAMLSeq>(SEQ_PROTO, p, true);
  let q = p + 1;
  for (;;) {
    q = skipFlowBlanks(s, q);
    if (s[q] === close) {
      q++;
      break;
    }
    if (isMap) {
      const key = flowScalarOrCollection(s, q, true);
      if (!(key instanceof Object) || !('value' in key) || typeof (key as Scalar).value !== 'string') throw UNSUPPORTED;
      q = skipFlowBlanks(s, key.range![1]);
      if (s[q] !== ':') throw UNSUPPORTED;
      q = skipFlowBlanks(s, q + 1);
      if (s[q] === ',' || s[q] === '}') throw UNSUPPORTED; // a key without a value
      const value = flowScalarOrCollection(s, q, false);
      (node as YAMLMap).items.push(pair(key as Scalar, value));
      q = value.range![1];
    } else {
      const value = flowScalarOrCollection(s, q, false);
      (node as YAMLSeq).items.push(value);
      q = value.range![1];
    }
    q = skipFlowBlanks(s, q);
    if (s[q] === ',') {
      q++;
      continue;
    }
    if (s[q] === close) {
      q++;
      break;
    }
    throw UNSUPPORTED; // `key: value` inside a list, or anything unexpected
  }
  node.range = [p, q, q];
  return node;
}

function skipFlowBlanks(s: string, q: number): number {
  while (s.charCodeAt(q) === SPACE || s.charCodeAt(q) === TAB) q++;
  const c = s.charCodeAt(q);
  if (Number.isNaN(c) || c === NL || c === HASH) throw UNSUPPORTED; // runs over lines
  return q;
}

function flowScalarOrCollection(s: string, q: number, asKey: boolean): Node {
  const c = s[q]!;
  if (c === '{' || c === '[') {
    if (asKey) throw UNSUPPORTED;
    return flow(s, q);
  }
  if (c === "'" || c === '"') return quoted(s, q);
  if ('&*!|>%@`,]}#'.includes(c)) throw UNSUPPORTED;
  if ((c === '-' || c === '?' || c === ':') && blankOrEnd(s, q + 1)) throw UNSUPPORTED;
  // A plain scalar in a flow collection ends at `,`, `]`, `}`, `: ` (or `:` before an indicator).
  let e = q;
  const end = lineEnd(s, q);
  for (; e < end; e++) {
    const ch = s[e]!;
    if (ch === ',' || ch === ']' || ch === '}' || ch === '[' || ch === '{') break;
    if (ch === ':') {
      const after = s[e + 1];
      if (after === ' ' || after === ',' || after === ']' || after === '}' || after === '\t') break;
      if (asKey) throw UNSUPPORTED; // `a:b` in a flow map: the library's rules differ by version
    }
    if (ch === '#' && (s[e - 1] === ' ' || s[e - 1] === '\t')) throw UNSUPPORTED;
  }
  let valueEnd = e;
  while (valueEnd > q && (s.charCodeAt(valueEnd - 1) === SPACE || s.charCodeAt(valueEnd - 1) === TAB)) valueEnd--;
  if (valueEnd === q) throw UNSUPPORTED;
  const source = s.slice(q, valueEnd);
  const value = resolvePlain(source);
  if (asKey && typeof value !== 'string') throw UNSUPPORTED;
  return scalar(value, 'PLAIN', q, valueEnd, source);
}
