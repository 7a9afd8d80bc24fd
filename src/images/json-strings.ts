// JSON written on one line (`{"image":"quay.io/a/b:1","pullPolicy":"IfNotPresent"}`, what a
// template's `toJson` writes into a ConfigMap or a Secret): the line readers see one word, so its
// strings are read here, each with the key it sits under and its place in the text. Pure; text
// that does not parse yields nothing (the callers read it as before).
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';

export interface JsonString {
  value: string;
  /** The key it sits under (for a list item, the list's key; '' at the top). */
  key: string;
  /** The value's character range in the text (inside its quotes). */
  start: number;
  end: number;
}

// A parse costs far more than the line readers' regexes: a minified dashboard of megabytes is
// left to them (as before this reader existed).
const MAX_JSON = 256 * 1024;

export function isOneLineJson(text: string): boolean {
  if (text.length > MAX_JSON) return false;
  const t = text.trim();
  return (t.startsWith('{') || t.startsWith('[')) && !t.includes('\n');
}

export function jsonStrings(text: string): JsonString[] {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) return [];
  const found: JsonString[] = [];
  const visit = (node: unknown, key: string, depth: number): void => {
    if (depth > 32) return;
    if (isMap(node)) for (const pair of node.items) visit(pair.value, isScalar(pair.key) ? String(pair.key.value) : '', depth + 1);
    else if (isSeq(node)) for (const item of node.items) visit(item, key, depth + 1);
    else if (isScalar(node) && typeof node.value === 'string' && node.range && node.type === 'QUOTE_DOUBLE') {
      const start = node.range[0] + 1;
      const end = start + node.value.length;
      // Only a string written as it reads (no escapes): its range is then exactly its value.
      if (text.slice(start, end) === node.value) found.push({ value: node.value, key, start, end });
    }
  };
  visit(doc.contents, '', 0);
  return found;
}
