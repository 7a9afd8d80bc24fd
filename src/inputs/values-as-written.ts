// The values files merged as helm merges `-f` layers, with every scalar kept as written, for the
// values digest of a release (release-digest.ts). It lets a redeploy whose values files differ only
// in what helm never sees (comments, key order, indentation, flow or block style, quoting of a
// string, anchors) be a no-op, without a helm run: the values probe cost every install and
// upgrade a helm process (30-50 ms) before helm upgrade could start.
//
// Safe by construction: two inputs get equal trees only if helm reads them as equal. A plain
// scalar is kept as its source text, not as a value: go-yaml (YAML 1.1) and this library (1.2)
// read `yes`, `0777` or `1e3` differently, but the same text is read the same way by each. So
// `1e3` and `1000` count as different (a needless upgrade), never the reverse. What this reading
// does not follow exactly as helm does (explicit tags, merge keys, several documents, a top level
// that is not a map, keys that YAML 1.1 reads as booleans, null or numbers) gives undefined: the
// caller then asks helm itself to merge the layers.
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments, type Document, type Node } from 'yaml';

type WrittenValue = string | WrittenValue[] | { [key: string]: WrittenValue };
type WrittenMap = { [key: string]: WrittenValue };

/** Plain keys that are strings to go-yaml as well: no YAML 1.1 boolean, null or number. */
const PLAIN_STRING_KEY = /^[A-Za-z_$][\w.\-/$]*$/;
const YAML11_WORDS =
  /^(y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL)$/;

class NotFollowed extends Error {}

/** The layers' merge (later files win; maps merge key by key), or undefined: see above. */
export function valuesAsWritten(files: (string | Buffer)[]): WrittenMap | undefined {
  try {
    let merged: WrittenMap = Object.create(null) as WrittenMap;
    for (const file of files) merged = mergeMaps(merged, readFile(file.toString()));
    return merged;
  } catch (error) {
    if (error instanceof NotFollowed) return undefined;
    throw error;
  }
}

function readFile(text: string): WrittenMap {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs) || docs.length > 1) throw new NotFollowed();
  const doc = docs[0];
  if (!doc || doc.contents === null) return {};
  if (doc.errors.length > 0) throw new NotFollowed();
  const top = written(doc.contents, doc);
  if (typeof top !== 'object' || Array.isArray(top)) {
    // A file that is only `~` or `null` is an empty map to helm; anything else is helm's error to report.
    if (
      isScalar(doc.contents) &&
      doc.contents.type === 'PLAIN' &&
      /^(~|null|Null|NULL|)$/.test(String(doc.contents.source))
    )
      return {};
    throw new NotFollowed();
  }
  return top;
}

function written(node: Node | null, doc: Document.Parsed, depth = 0): WrittenValue {
  if (depth > 200) throw new NotFollowed();
  if (node === null) return 'p:';
  if (isAlias(node)) return written(node.resolve(doc) as Node, doc, depth + 1);
  if (node.tag !== undefined) throw new NotFollowed();
  if (isScalar(node)) return `${node.type === 'PLAIN' ? 'p' : 's'}:${String(node.source)}`;
  if (isSeq(node)) return node.items.map((item) => written(item as Node, doc, depth + 1));
  if (isMap(node)) {
    // No prototype: a key `__proto__` is a key like any other.
    const out: WrittenMap = Object.create(null) as WrittenMap;
    for (const pair of node.items) {
      const key = pair.key as Node | null;
      if (!isScalar(key) || key.tag !== undefined) throw new NotFollowed();
      const text = String(key.source);
      if (key.type === 'PLAIN' && (text === '<<' || !PLAIN_STRING_KEY.test(text) || YAML11_WORDS.test(text)))
        throw new NotFollowed();
      out[text] = written(pair.value as Node | null, doc, depth + 1);
    }
    return out;
  }
  throw new NotFollowed();
}

/** Helm's mergeMaps (pkg/cli/values): a map over a map merges; anything else replaces. */
function mergeMaps(base: WrittenMap, over: WrittenMap): WrittenMap {
  const out: WrittenMap = Object.assign(Object.create(null) as WrittenMap, base);
  for (const [key, value] of Object.entries(over)) {
    const before = out[key];
    out[key] = isWrittenMap(value) && isWrittenMap(before) ? mergeMaps(before, value) : value;
  }
  return out;
}

function isWrittenMap(v: WrittenValue | undefined): v is WrittenMap {
  return typeof v === 'object' && !Array.isArray(v);
}
