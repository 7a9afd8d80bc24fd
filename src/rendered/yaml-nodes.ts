// Reading the YAML nodes of a rendered manifest as helm's Go YAML reads them: aliases followed,
// `<<` merge keys applied (explicit keys win), and paths with `*` and `[]` walked. Pure; the image
// finders (manifest-images.ts) and the edits (pin-fields.ts, pull-secret-edit.ts) read through it.
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Scalar, type YAMLMap } from 'yaml';

export type Segment = { key: string; each: boolean } | { key: '*'; each: true };

export function resolve(node: unknown, doc: Document.Parsed): Node | undefined {
  if (isAlias(node)) return (node.resolve(doc) as Node | undefined) ?? undefined;
  return (node ?? undefined) as Node | undefined;
}

/**
 * A map lookup that follows aliases and `<<` merge keys: explicit keys win over merged ones, and
 * of a repeated key the last one counts (go-yaml v2's behaviour).
 */
export function get(map: YAMLMap, key: string, doc: Document.Parsed): Node | undefined {
  const merges: unknown[] = [];
  let explicit: { value: unknown } | undefined;
  for (const pair of map.items) {
    if (!isScalar(pair.key)) continue;
    if (pair.key.value === key) explicit = { value: pair.value };
    else if (pair.key.source === '<<' && typeof pair.key.value === 'symbol') merges.push(pair.value);
  }
  if (explicit) return resolve(explicit.value, doc);
  for (const merge of merges) {
    const target = resolve(merge, doc);
    const sources = isSeq(target) ? target.items.map((item) => resolve(item, doc)) : [target];
    for (const source of sources) {
      if (!isMap(source)) continue;
      const found = get(source, key, doc);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

export function getScalar(map: YAMLMap, key: string, doc: Document.Parsed): Scalar | undefined {
  const node = get(map, key, doc);
  return isScalar(node) ? node : undefined;
}

export function stringAt(map: YAMLMap, keys: string[], doc: Document.Parsed): string | undefined {
  let node: unknown = map;
  for (const key of keys) node = isMap(node) ? get(node, key, doc) : undefined;
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

export function at(obj: YAMLMap, path: string[], doc: Document.Parsed): unknown {
  let node: unknown = obj;
  for (const key of path) node = isMap(node) ? get(node, key, doc) : undefined;
  return node;
}

export function walkSegments(
  node: unknown,
  segments: Segment[],
  path: string,
  doc: Document.Parsed,
  fn: (node: unknown, path: string) => void,
): void {
  const [segment, ...rest] = segments;
  const current = resolve(node, doc);
  if (!segment) {
    fn(node, path);
    return;
  }
  const join = (key: string) => (path ? `${path}.${key}` : key);
  if (segment.key === '*') {
    if (isSeq(current)) current.items.forEach((item, i) => walkSegments(item, rest, `${path}[${i}]`, doc, fn));
    else if (isMap(current)) {
      for (const pair of current.items) {
        if (isScalar(pair.key) && typeof pair.key.value === 'string')
          walkSegments(pair.value, rest, join(pair.key.value), doc, fn);
      }
    }
    return;
  }
  if (!isMap(current)) return;
  const child = get(current, segment.key, doc);
  if (child === undefined) return;
  if (!segment.each) {
    walkSegments(child, rest, join(segment.key), doc, fn);
    return;
  }
  if (isSeq(child)) child.items.forEach((item, i) => walkSegments(item, rest, `${join(segment.key)}[${i}]`, doc, fn));
}
