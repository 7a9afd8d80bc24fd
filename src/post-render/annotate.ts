// The KOTS app slug on every object helm applies: `kubectl kots remove --undeploy` deletes, in
// its namespace and the Application's additionalNamespaces, each namespaced object whose
// `kots.io/app-slug` annotation equals the app's slug (kots pkg/operator/client/delete.go,
// clearNamespaces). Objects helm created from our Job carry none unless we set it, so the
// post-render sets it, by text edits like the image rewrite (text-edits.ts says why).
//
// Only metadata.annotations of each object (each item of a `kind: List`/`*List`) is edited,
// never a pod template's or a StatefulSet's volumeClaimTemplates': those fields are immutable
// (volumeClaimTemplates) or restart pods, and KOTS matches the object's own annotation only.
import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Pair, type YAMLMap } from 'yaml';
import { visitObjects, type ManifestStream } from '../images/manifest-images.js';
import { rangeOf, type TextEdit } from '../rendered/text-edits.js';

/**
 * The edits that give every object of one parsed piece `annotations[key] = value`. The value is
 * always written quoted: a slug such as `yes` or `1234` would reach the API server as a boolean
 * or a number in YAML 1.1, which an annotation refuses.
 */
export function annotationEdits(stream: ManifestStream, key: string, value: string): TextEdit[] {
  const edits: TextEdit[] = [];
  const seen = new Set<YAMLMap>();
  visitObjects(stream, (obj, ctx) => {
    if (seen.has(obj)) return; // one anchored object reached twice (a List of aliases): once
    seen.add(obj);
    const edit = objectEdit(obj, ctx.doc, stream.text, key, value);
    if (edit) edits.push(edit);
  });
  return edits;
}

function objectEdit(
  obj: YAMLMap,
  doc: Document.Parsed,
  text: string,
  key: string,
  value: string,
): TextEdit | undefined {
  const metadataPair = explicitPair(obj, 'metadata');
  const metadata = metadataPair ? metadataPair.value : undefined;
  // No metadata of its own (none at all, or one from a `<<` merge or an alias, both shared with
  // other nodes): an explicit copy with the annotation, so nothing shared is changed.
  if (!metadataPair || isAlias(metadata)) {
    const merged = plain(metadataPair ? metadata : mergedValue(obj, 'metadata', doc), doc);
    if (!isRecord(merged)) return undefined; // no metadata at all: no name either, the API refuses it
    const annotations = isRecord(merged.annotations) ? merged.annotations : {};
    const json = JSON.stringify({ ...merged, annotations: { ...annotations, [key]: value } });
    return metadataPair ? replaceNode(metadataPair.value as Node, json) : insertPair(obj, text, 'metadata', json);
  }
  if (!isMap(metadata)) return undefined; // `metadata: null`: refused by the API server anyway
  return annotationsEdit(metadata, doc, text, key, value);
}

function annotationsEdit(
  metadata: YAMLMap,
  doc: Document.Parsed,
  text: string,
  key: string,
  value: string,
): TextEdit | undefined {
  const pair = explicitPair(metadata, 'annotations');
  const quoted = JSON.stringify(value);
  if (!pair) {
    const merged = plain(mergedValue(metadata, 'annotations', doc), doc);
    // None: a one-line map of ours, read the same by go-yaml and in any indentation.
    if (!isRecord(merged)) return insertPair(metadata, text, 'annotations', `{${keyText(key)}: ${quoted}}`);
    return insertPair(metadata, text, 'annotations', JSON.stringify({ ...merged, [key]: value }));
  }
  const annotations = pair.value;
  if (isAlias(annotations)) {
    const shared = plain(annotations, doc);
    return replaceNode(
      annotations as unknown as Node,
      JSON.stringify({ ...(isRecord(shared) ? shared : {}), [key]: value }),
    );
  }
  if (annotations === null || annotations === undefined || (isScalar(annotations) && annotations.value === null)) {
    // `annotations:` with nothing after it, `~` or `null`.
    const entry = `{${JSON.stringify(key)}: ${quoted}}`;
    const [start, end] = annotations
      ? rangeOf(annotations)
      : [rangeOf(pair.key as Node)[1], rangeOf(pair.key as Node)[1]];
    if (start !== end) return { start, end, text: entry };
    // Inserted into `key:` or `key: # comment`: a blank before the map and before a `#`.
    return {
      start,
      end,
      text: `${/\s/.test(text[start - 1] ?? '') ? '' : ' '}${entry}${text[start] === '#' ? ' ' : ''}`,
    };
  }
  if (!isMap(annotations)) return undefined; // a string or a list: the API server refuses it
  const existing = explicitPair(annotations, key);
  if (existing) {
    const node = existing.value;
    if (isScalar(node) && node.value === value) return undefined;
    if (!isScalar(node) || !node.range) return undefined;
    // A block scalar's range runs through its final line break: keep one.
    const block = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED';
    return { ...replaceNode(node, quoted), text: block ? `${quoted}\n` : quoted };
  }
  return insertPair(annotations, text, key, quoted);
}

/** A new `key: value` pair as the map's first, in its own style (block: at the first key's column). */
function insertPair(map: YAMLMap, text: string, key: string, valueText: string): TextEdit | undefined {
  const [start] = rangeOf(map);
  if (map.flow) {
    if (text[start] !== '{') return undefined;
    return {
      start: start + 1,
      end: start + 1,
      text: `${keyText(key)}: ${valueText}${map.items.length > 0 ? ', ' : ''}`,
    };
  }
  const first = map.items[0]?.key as Node | undefined;
  if (!first || !isScalar(first)) return undefined;
  const [keyStart] = rangeOf(first);
  const column = keyStart - (text.lastIndexOf('\n', keyStart - 1) + 1);
  return { start: keyStart, end: keyStart, text: `${keyText(key)}: ${valueText}\n${' '.repeat(column)}` };
}

/** A key such as `kots.io/app-slug` is a plain scalar in block and flow context alike. */
function keyText(key: string): string {
  return /^[a-z][a-z0-9./-]*$/.test(key) ? key : JSON.stringify(key);
}

function replaceNode(node: Node, json: string): TextEdit {
  const [start, end] = rangeOf(node);
  return { start, end, text: json };
}

/** The pair written in the map itself (the last one: go-yaml keeps the last), not from a merge. */
function explicitPair(map: YAMLMap, key: string): Pair | undefined {
  return (map.items as Pair[]).findLast((p) => isScalar(p.key) && p.key.value === key);
}

/** What a `<<` merge key gives `key` (the first merge that has it wins, as in YAML 1.1). */
function mergedValue(map: YAMLMap, key: string, doc: Document.Parsed): unknown {
  for (const pair of map.items as Pair[]) {
    if (!(isScalar(pair.key) && pair.key.source === '<<')) continue;
    const sources = isSeq(pair.value) ? pair.value.items : [pair.value];
    for (const source of sources) {
      const resolved = isAlias(source) ? source.resolve(doc) : source;
      if (isMap(resolved)) {
        const found = explicitPair(resolved, key);
        if (found) return found.value;
      }
    }
  }
  return undefined;
}

function plain(node: unknown, doc: Document.Parsed): unknown {
  if (node === undefined || node === null) return undefined;
  return (node as Node).toJS(doc);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
