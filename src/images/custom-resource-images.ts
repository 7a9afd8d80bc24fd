// Images a custom resource names outside a pod template: an operator's own configuration keys
// (`image`, `sidecarImage`, `docker_image`), and keys naming only a registry, reported.
import { isMap, isScalar, isSeq, type Document, type Scalar, type YAMLMap } from 'yaml';
import { resolve } from '../rendered/yaml-nodes.js';
import { isEmbeddedImage, isRegistryOnly } from './embedded-images.js';
import type { ObjectContext, ObjectSink } from './object-sink.js';

/**
 * Custom resources: any `image` (or `*Image`, `*_image`) key holding a reference (Zarf does the
 * same); and a `repository`/`registry` key naming only a registry, which an operator joins with
 * an image name and version of its own (gpu-operator's ClusterPolicy: reported).
 */
export function locateInCustomResource(obj: YAMLMap, ctx: ObjectContext, at: ObjectSink): void {
  walkImageKeys(obj, ctx.prefix.replace(/\.$/, ''), ctx.doc, (node, key, path) => {
    if (typeof node.value !== 'string') return;
    if (!IMAGE_KEY.test(key)) {
      if (isRegistryOnly(node.value, key)) at.addRegistry(node, path, key, node.value);
      return;
    }
    if (
      key === 'image' ? isEmbeddedImage(node.value, key) || isPlainImage(node.value) : isEmbeddedImage(node.value, key)
    )
      at.add(node, path);
  });
}

/** `image: nginx:1.27` in a custom resource: a plain name with a tag is an image too. */
function isPlainImage(value: string): boolean {
  return /^[a-z0-9][a-z0-9._/-]*:[\w][\w.-]*$/.test(value) && !value.includes('://');
}

// `image`, `sidecarImage`, `docker_image`, `logical-backup-image`: keys a custom resource names
// an image with (an operator's configuration: postgres-operator's OperatorConfiguration).
const IMAGE_KEY = /^(?:image|[a-z][A-Za-z0-9]*Image|[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*[_-]image)$/;
// `repository`, `registry`, `imageRegistry`, `hub`: keys that may name only where images come from.
const REGISTRY_KEY =
  /^(?:repository|registry|hub|[a-z][A-Za-z0-9]*(?:Repository|Registry|Hub)|[a-z][a-z0-9]*(?:[_-][a-z0-9]+)*[_-](?:repository|registry|hub))$/;

function walkImageKeys(
  node: unknown,
  path: string,
  doc: Document.Parsed,
  fn: (node: Scalar, key: string, path: string) => void,
  depth = 0,
): void {
  const current = resolve(node, doc);
  if (depth > 64) return;
  if (isSeq(current)) current.items.forEach((item, i) => walkImageKeys(item, `${path}[${i}]`, doc, fn, depth + 1));
  else if (isMap(current)) {
    for (const pair of current.items) {
      if (!isScalar(pair.key) || typeof pair.key.value !== 'string') continue;
      const key = pair.key.value;
      const child = resolve(pair.value, doc);
      const childPath = path ? `${path}.${key}` : key;
      if (isScalar(child) && (IMAGE_KEY.test(key) || REGISTRY_KEY.test(key))) fn(child, key, childPath);
      else walkImageKeys(child, childPath, doc, fn, depth + 1);
    }
  }
}
