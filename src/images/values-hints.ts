// An extra values layer that points a chart's own image settings at the local registry, for
// charts that follow the common conventions. The post-renderer rewrites every image it can see
// (the guarantee); this layer reaches what it cannot: hook images on helm 3 (which never
// post-renders hooks) and names an operator computes from its values.
//
// A hint must never change WHICH image runs: it may only produce `<registry>/<last component>`
// with the same tag or digest. So:
// - an image map (a map with a string `repository` next to `registry`, `tag` or `digest`, or a
//   string `image` next to `registry` (ingress-nginx), at any
//   depth, subchart sections included; lists are left alone because a values layer can only
//   replace a list whole):
//   - with a `registry` key: registry = address, repository = last path component;
//   - without: repository = address/last path component.
//   `tag` and `digest` are never touched.
// - `global.imageRegistry` (Bitnami and others): set to the address, as the per-image registry.
// - a string under an `image`/`*Image` key only when it is a complete reference (a registry host
//   and a tag or digest): a bare `pilot` is joined by the template with a hub and a tag we cannot
//   see, and `<registry>/pilot:latest` would deploy another version.
// Every hint set is then checked against a real render (verify-hints.ts) and dropped when it
// changed an image; when it changes images of a chart that verifies them (Bitnami's
// "non-standard containers" check), the chart's own allow switch is set.
import {
  parseImageReference,
  rewriteImageReference,
  isKotsLocalName,
  type ImageReference,
  type LocalRegistry,
} from '../common/image-reference.js';

type Values = Record<string, unknown>;

export interface ValuesHints {
  values: Values;
  /** Dotted paths of the allow switches set, to log. */
  allowSwitches: string[];
}

export function buildValuesHints(chartValues: unknown, registry: LocalRegistry): Values {
  return buildHints(chartValues, registry).values;
}

export function buildHints(chartValues: unknown, registry: LocalRegistry): ValuesHints {
  const hints: Values = {};
  let usesGlobalRegistry = false;
  // ingress-nginx: `global.image.registry` joined with each `{image, tag, digest}` (a per-image
  // `registry` wins over it), so such maps take a registry hint too.
  const nameMaps = hasGlobalImageRegistry(chartValues);

  const visit = (node: Values, path: string[]): void => {
    registryNamespaceHint(node, path, registry, hints);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'global' && isValues(value) && 'imageRegistry' in value) usesGlobalRegistry = true;
      if (isValues(value) && (isImageMap(value) || (nameMaps && isNameMap(value)))) {
        const hint = imageMapHint(value, registry);
        if (hint) setAt(hints, [...path, key], hint);
        continue;
      }
      if (isImageKey(key) && typeof value === 'string') {
        const ref = completeReference(value);
        if (ref && !isKotsLocalName(ref, registry)) setAt(hints, [...path, key], rewriteImageReference(ref, registry));
        continue;
      }
      if (isValues(value)) visit(value, [...path, key]);
    }
  };
  if (isValues(chartValues)) visit(chartValues, []);
  if (usesGlobalRegistry && Object.keys(hints).length > 0) setAt(hints, ['global', 'imageRegistry'], registry.address);
  const allowSwitches: string[] = [];
  if (Object.keys(hints).length > 0) {
    for (const path of allowSwitchesOf(chartValues)) {
      setAt(hints, path, true);
      allowSwitches.push(path.join('.'));
    }
  }
  return { values: hints, allowSwitches };
}

/** Hints without the global registry: for charts whose templates prefix it to full paths. */
export function withoutGlobalRegistry(hints: Values): Values {
  const copy = structuredClone(hints);
  const global = copy.global;
  if (isValues(global)) {
    delete global.imageRegistry;
    if (Object.keys(global).length === 0) delete copy.global;
  }
  return copy;
}

/**
 * The switches charts offer to accept images other than their defaults. Bitnami's
 * `global.security.allowInsecureImages`, at the root or in any subchart's defaults (a Bitnami
 * chart as a dependency of a chart that has no such switch): set at the root, since helm hands
 * the root's globals to every subchart.
 */
function allowSwitchesOf(values: unknown): string[][] {
  const offers = (node: unknown, depth: number): boolean => {
    if (!isValues(node) || depth > 32) return false;
    const security = isValues(node.global) ? node.global.security : undefined;
    if (isValues(security) && 'allowInsecureImages' in security && security.allowInsecureImages !== true) return true;
    return Object.entries(node).some(([k, v]) => k !== 'global' && offers(v, depth + 1));
  };
  return offers(values, 0) ? [['global', 'security', 'allowInsecureImages']] : [];
}

/** Any `global.image.registry` string, at the root or in a subchart's defaults. */
function hasGlobalImageRegistry(values: unknown, depth = 0): boolean {
  if (!isValues(values) || depth > 32) return false;
  const image = isValues(values.global) ? values.global.image : undefined;
  if (isValues(image) && typeof image.registry === 'string') return true;
  return Object.entries(values).some(([k, v]) => k !== 'global' && hasGlobalImageRegistry(v, depth + 1));
}

/** `{image: <path without a registry host>, tag|digest}`: joined with a global registry. */
function isNameMap(value: Values): boolean {
  if (typeof value.image !== 'string' || !('tag' in value || 'digest' in value)) return false;
  const first = value.image.split('/')[0]!;
  return value.image.includes('/')
    ? !(first.includes('.') || first.includes(':') || first === 'localhost')
    : value.image !== '';
}

/**
 * cert-manager: sibling `imageRegistry` and `imageNamespace` strings from which every image is
 * built as `<imageRegistry>/<imageNamespace>/<name>`: the registry's host and namespace make each
 * one its exact KOTS name (`<address>/<name>`), whatever the per-image `name`.
 */
function registryNamespaceHint(node: Values, path: string[], registry: LocalRegistry, hints: Values): void {
  if (path.at(-1) === 'global' || typeof node.imageRegistry !== 'string' || typeof node.imageNamespace !== 'string')
    return;
  const namespace = registry.namespace ?? '';
  if (node.imageRegistry === registry.host && node.imageNamespace === namespace) return;
  setAt(hints, [...path, 'imageRegistry'], registry.host);
  setAt(hints, [...path, 'imageNamespace'], namespace);
}

function isImageMap(value: Values): boolean {
  if (typeof value.repository === 'string') return 'registry' in value || 'tag' in value || 'digest' in value;
  // ingress-nginx and kubernetes-sigs charts: `{registry, image, tag, digest}`.
  return typeof value.image === 'string' && 'registry' in value;
}

function imageMapHint(image: Values, registry: LocalRegistry): Values | undefined {
  const nameKey = typeof image.repository === 'string' ? 'repository' : 'image';
  const repository = image[nameKey];
  if (typeof repository !== 'string' || repository === '' || repository.includes('{{')) return undefined;
  // A tag or digest inside `repository` is too unusual to guess how the template joins it.
  if (repository.includes('@') || repository.lastIndexOf(':') > repository.lastIndexOf('/')) return undefined;
  // An `image`-named map is always joined with a registry (its own or a global one).
  const hasRegistry = 'registry' in image || nameKey === 'image';
  if (hasRegistry && image.registry !== null && image.registry !== undefined && typeof image.registry !== 'string')
    return undefined;
  const prefix = hasRegistry && typeof image.registry === 'string' ? image.registry : '';
  const ref = parseOrUndefined(prefix ? `${prefix}/${repository}` : repository);
  if (!ref) return undefined;
  const last = ref.repository.slice(ref.repository.lastIndexOf('/') + 1);
  if (hasRegistry) {
    return image.registry === registry.address && repository === last
      ? undefined
      : { registry: registry.address, [nameKey]: last };
  }
  const local = `${registry.address}/${last}`;
  return repository === local ? undefined : { [nameKey]: local };
}

function isImageKey(key: string): boolean {
  return key === 'image' || /^[a-z][A-Za-z0-9]*Image$/.test(key);
}

/** A reference that names its registry host and a tag or digest: used verbatim by templates. */
function completeReference(value: string): ImageReference | undefined {
  const slash = value.indexOf('/');
  if (slash === -1) return undefined;
  const host = value.slice(0, slash);
  if (!(host.includes('.') || host.includes(':') || host === 'localhost')) return undefined;
  if (!(value.includes('@') || value.lastIndexOf(':') > value.lastIndexOf('/'))) return undefined;
  return parseOrUndefined(value);
}

function parseOrUndefined(value: string): ImageReference | undefined {
  if (value.includes('{{')) return undefined;
  try {
    return parseImageReference(value);
  } catch {
    return undefined; // not an image after all: leave it to the chart
  }
}

function isValues(value: unknown): value is Values {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function setAt(root: Values, path: string[], value: unknown): void {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (!isValues(node[key])) node[key] = {};
    node = node[key] as Values;
  }
  node[path[path.length - 1]!] = value;
}
