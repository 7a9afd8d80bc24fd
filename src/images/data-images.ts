// Images named in an object's data: a ConfigMap's values, and an app's own Secret's stringData
// and decoded data (embedded-images.ts decides what a string holds; secret-data.ts decodes).
import { isMap, isScalar, type Document, type Scalar, type YAMLMap } from 'yaml';
import { isSecretKey } from '../common/secrets.js';
import { get, resolve, stringAt } from '../rendered/yaml-nodes.js';
import { findEmbeddedReferences } from './embedded-images.js';
import type { ObjectContext, ObjectSink } from './object-sink.js';
import { decodeSecretValue, valuesFileProblem } from './secret-data.js';

/** A ConfigMap's data: each string value read for references. */
export function locateInConfigMap(obj: YAMLMap, ctx: ObjectContext, at: ObjectSink): void {
  const data = get(obj, 'data', ctx.doc);
  if (!isMap(data)) return;
  for (const pair of data.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    const value = resolve(pair.value, ctx.doc);
    if (typeof key === 'string' && isScalar(value)) at.addEmbedded(value, `data.${key}`, { where: 'data', key });
  }
}

/**
 * An app's own Secret (a notebook hub's values file naming the image of the pods it starts):
 * `stringData` read as ConfigMap data; `data` decoded, read the same way, and its edits encoded
 * again (rewrite-manifests.ts). What cannot be read is reported, never edited. Nothing under a
 * secret-looking key (`password`, `cookie_secret`, `api_token`: src/common/secrets.ts) is read or
 * listed: a token shaped like `host/x:y` must never be rewritten, nor printed by `images`.
 */
export function locateInSecret(obj: YAMLMap, ctx: ObjectContext, at: ObjectSink): void {
  if (isKubernetesSecretType(stringAt(obj, ['type'], ctx.doc))) return;
  const read = (value: Scalar, path: string, key: string, text: string, decoded?: string) => {
    const { images, registries } = findEmbeddedReferences(text, { where: 'data', key });
    for (const ref of images) if (!isSecretKey(ref.via)) at.addReference(value, path, ref, 'data', decoded);
    for (const ref of registries) if (!isSecretKey(ref.via)) at.addRegistry(value, path, ref.via, ref.reference);
  };
  forEachDataValue(obj, 'stringData', ctx.doc, (key, value) => {
    if (!isSecretKey(key)) read(value, `stringData.${key}`, key, String(value.value));
  });
  forEachDataValue(obj, 'data', ctx.doc, (key, value) => {
    if (isSecretKey(key)) return;
    const path = `data.${key}`;
    const text = readSecretValue(value, key);
    if ('problem' in text) at.addRegistry(value, path, key, '', text.problem);
    if ('text' in text) read(value, path, key, text.text, text.text);
  });
}

/** Each `key: <string>` of a map of string values (a ConfigMap's or a Secret's data). */
function forEachDataValue(
  obj: YAMLMap,
  field: string,
  doc: Document.Parsed,
  fn: (key: string, value: Scalar) => void,
): void {
  const data = get(obj, field, doc);
  if (!isMap(data)) return;
  for (const pair of data.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    const value = resolve(pair.value, doc);
    if (typeof key === 'string' && isScalar(value) && typeof value.value === 'string') fn(key, value);
  }
}

/** The Secret types Kubernetes defines (TLS, registry credentials, tokens) hold no image. */
function isKubernetesSecretType(type: string | undefined): boolean {
  return type !== undefined && type.startsWith('kubernetes.io/');
}

/** A Secret's `data` value as text, or why it is left untouched (secret-data.ts). */
function readSecretValue(value: Scalar, key: string): { text: string } | { problem: string } | { binary: true } {
  const decoded = decodeSecretValue(String(value.value));
  if (!('text' in decoded)) return decoded;
  const problem = valuesFileProblem(key, decoded.text);
  return problem ? { problem } : decoded;
}
