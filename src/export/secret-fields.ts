// Secret values must not reach base/ or overlay/ in clear (issue 23): the fields of non-Secret
// objects that hold a value the run knows to be secret (src/common/secrets.ts: the values under
// secret-looking keys of every values layer and --set), named by object and field path, never
// by value. Pure.
import type { SecretRegistry } from '../common/secrets.js';
import type { RenderedObject } from './manifest-documents.js';
import { pointerSegment } from './json-patch.js';

export interface SecretField {
  kind: string;
  name: string;
  /** JSON pointer of the field, e.g. /data/DATABASE_URL. */
  path: string;
}

export function secretFields(objects: RenderedObject[], secrets: SecretRegistry): SecretField[] {
  return objects.flatMap((o) =>
    leavesHoldingSecrets(o.body, '', secrets).map((path) => ({ kind: o.kind, name: o.name, path })),
  );
}

function leavesHoldingSecrets(node: unknown, path: string, secrets: SecretRegistry): string[] {
  if (Array.isArray(node)) return node.flatMap((v, i) => leavesHoldingSecrets(v, `${path}/${i}`, secrets));
  if (node !== null && typeof node === 'object') {
    return Object.entries(node).flatMap(([k, v]) => leavesHoldingSecrets(v, `${path}/${pointerSegment(k)}`, secrets));
  }
  if (typeof node !== 'string' && typeof node !== 'number') return [];
  const text = String(node);
  return secrets.maskText(text) === text ? [] : [path];
}
