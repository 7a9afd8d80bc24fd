// An image given as two keys of a values file kept in a ConfigMap or a Secret: a name (or
// repository, or image) and a tag, as the values hints read them from the chart's values
// (`singleuser: {image: {name: quay.io/jupyterhub/k8s-singleuser-sample, tag: "4.0.0"}}`, a
// notebook hub's values file for the pods it starts itself). The reference is `<name>:<tag>`
// (what the bundle must carry); only the name is rewritten (`<address>/<last component>`), the
// tag key is left alone.
// Or as three keys, the image map the values hints read in charts' own values (`{registry:
// quay.io, repository: jupyterhub/k8s-singleuser-sample, tag: "4.0.0"}`, Bitnami's convention):
// the reference is `<registry>/<repository>:<tag>`; the registry key is rewritten to the local
// address and the repository key to the last component, as the values hints do, so that the
// app's `<registry>/<repository>` is the local name.
//
// A pair counts only when the name is a repository with a registry host, or the key above the map
// says "image"; the tag is a plain tag. Pure; the text is parsed only when it has a `tag` key,
// and one-line JSON (a template's toJson, of megabytes for a dashboard) by json-strings.ts's
// linear reader rather than as YAML, whose parse of a few hundred KiB takes seconds.
import { isMap, isScalar, isSeq, Pair, parseDocument, Scalar, YAMLMap, type Node } from 'yaml';
import { parseImageReference } from '../common/image-reference.js';
import { isOneLineJson, jsonObjects, type JsonMember } from './json-strings.js';

export interface NameTagPair {
  /** `<name>:<tag>`. */
  reference: string;
  /** The name's character range in the text. */
  start: number;
  end: number;
  /** The key holding the name (`name`, `repository`, `image`), for `--why`. */
  via: string;
  /** The `registry` key's value range when the image is given as three keys (the name is then its repository). */
  registry?: { start: number; end: number; via: string };
}

const HAS_TAG_KEY = /(?:^|[\s{,])["']?tag["']?[ \t]*:/m;
const NAME_KEYS = ['name', 'repository', 'image'];
const TAG = /^[\w][\w.-]{0,127}$/;
const HOSTED = /^(?:localhost|[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::\d+)?\//;
const MAX_TEXT = 1024 * 1024;

export function findNameTagPairs(text: string): NameTagPair[] {
  if (!HAS_TAG_KEY.test(text)) return [];
  if (isOneLineJson(text)) return jsonPairs(text);
  if (text.length > MAX_TEXT) return [];
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length > 0) return [];
  const found: NameTagPair[] = [];
  const visit = (node: unknown, key: string, depth: number): void => {
    if (depth > 32) return;
    if (isMap(node)) {
      const pair = pairOf(node, key, text);
      if (pair) found.push(pair);
      for (const item of node.items) visit(item.value, isScalar(item.key) ? String(item.key.value) : '', depth + 1);
    } else if (isSeq(node)) {
      for (const item of node.items) visit(item, key, depth + 1);
    }
  };
  visit(doc.contents, '', 0);
  return found;
}

/** The objects of one-line JSON with a `tag` member, as YAML maps of scalars carrying their ranges, read by the same rules. */
function jsonPairs(text: string): NameTagPair[] {
  return jsonObjects(text, (members) => members.has('tag')).flatMap(({ key, members }) => {
    const map = new YAMLMap<Scalar, Scalar>();
    for (const [name, member] of members) map.items.push(new Pair(new Scalar(name), scalarOf(member)));
    return pairOf(map, key, text) ?? [];
  });
}

/** A string as YAML reads it double-quoted (its range from the opening quote), another value as a plain scalar. */
function scalarOf(m: JsonMember): Scalar {
  const node = new Scalar<unknown>(
    m.quoted ? (m.text.includes('\\') ? JSON.parse(`"${m.text}"`) : m.text) : JSON.parse(m.text),
  );
  node.type = m.quoted ? 'QUOTE_DOUBLE' : 'PLAIN';
  node.range = m.quoted ? [m.start - 1, m.end + 1, m.end + 1] : [m.start, m.end, m.end];
  return node;
}

function pairOf(
  map: { get(key: string, keepScalar: true): unknown },
  key: string,
  text: string,
): NameTagPair | undefined {
  const tag = map.get('tag', true);
  if (!isScalar(tag)) return undefined;
  const tagText = scalarText(tag, text);
  if (tagText === undefined || !TAG.test(tagText)) return undefined;
  for (const nameKey of NAME_KEYS) {
    const name = map.get(nameKey, true);
    if (!isScalar(name) || typeof name.value !== 'string') continue;
    const triple = tripleOf(map, name, nameKey, key, tagText, text);
    if (triple !== undefined) return triple || undefined;
    const value = name.value;
    if (!(HOSTED.test(value) || /image/i.test(key))) return undefined;
    if (value.includes('@') || value.lastIndexOf(':') > value.lastIndexOf('/')) return undefined; // a tag of its own
    const range = valueRange(name, text);
    if (!range) return undefined;
    try {
      parseImageReference(`${value}:${tagText}`);
    } catch {
      return undefined;
    }
    return { reference: `${value}:${tagText}`, ...range, via: `${key ? `${key}.` : ''}${nameKey}` };
  }
  return undefined;
}

/**
 * `{registry, <name key>, tag}`: a pair whose name lacks its host, the host in `registry`.
 * Undefined when the map has no string `registry` beside a name without a host (read as a pair);
 * false when it has one but the three do not make a reference (nothing counts).
 */
function tripleOf(
  map: { get(key: string, keepScalar: true): unknown },
  name: Scalar,
  nameKey: string,
  key: string,
  tag: string,
  text: string,
): NameTagPair | false | undefined {
  const registry = map.get('registry', true);
  const value = name.value as string;
  if (!isScalar(registry) || typeof registry.value !== 'string' || registry.value === '' || HOSTED.test(value))
    return undefined;
  const host = registry.value.replace(/\/+$/, '');
  if (!HOSTED.test(`${host}/`) || value.includes('@') || value.lastIndexOf(':') > value.lastIndexOf('/')) return false;
  const [nameRange, registryRange] = [valueRange(name, text), valueRange(registry, text)];
  if (!nameRange || !registryRange || registryRange.end - registryRange.start !== host.length) return false;
  const reference = `${host}/${value}:${tag}`;
  try {
    parseImageReference(reference);
  } catch {
    return false;
  }
  const at = key ? `${key}.` : '';
  return { reference, ...nameRange, via: `${at}${nameKey}`, registry: { ...registryRange, via: `${at}registry` } };
}

/** A tag as written (`4.0` stays `4.0`, not the number 4). */
function scalarText(node: Scalar, text: string): string | undefined {
  if (typeof node.value === 'string') return node.value;
  if (node.type !== 'PLAIN' || !node.range) return undefined;
  return text.slice(node.range[0], node.range[1]).trim();
}

/** Where a string scalar's value sits in the text, when it sits there verbatim (plain or quoted, on one line). */
function valueRange(node: Node & Scalar, text: string): { start: number; end: number } | undefined {
  if (!node.range || typeof node.value !== 'string') return undefined;
  const quote = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE' ? 1 : node.type === 'PLAIN' ? 0 : -1;
  if (quote < 0) return undefined;
  const start = node.range[0] + quote;
  const end = start + node.value.length;
  return text.slice(start, end) === node.value ? { start, end } : undefined;
}
