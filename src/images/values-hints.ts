// An extra values layer that points a chart's own image settings at the local registry, for
// charts that follow the common conventions. The post-renderer already rewrites every pod image;
// this layer reaches what it cannot see: images a template writes into args, env or a ConfigMap
// (operators that start pods themselves, for example).
//
// Conventions recognised, at any depth (subchart sections included; lists are left alone because
// a values layer can only replace a list whole):
// - `global.imageRegistry` (Bitnami and others): set to the registry address (host[/namespace]).
// - a map under a key `image` or `<something>Image` with a string `repository`:
//   - with a `registry` key: registry = address, repository = last path component;
//   - without: repository = address/last path component.
//   Either way `registry/repository` is the KOTS name, whether or not the chart lets
//   `global.imageRegistry` override the per-image registry. `tag` and `digest` stay as they are.
// - a string under such a key that parses as an image reference: replaced by its KOTS name.
import {
  isInLocalRegistry,
  parseImageReference,
  rewriteImageReference,
  type ImageReference,
  type LocalRegistry,
} from './image-reference.js';

type Values = Record<string, unknown>;

export function buildValuesHints(chartValues: unknown, registry: LocalRegistry): Values {
  const hints: Values = {};
  let usesGlobalRegistry = false;

  const visit = (node: Values, path: string[]): void => {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'global' && isValues(value) && 'imageRegistry' in value) usesGlobalRegistry = true;
      if (isImageKey(key)) {
        if (isValues(value)) {
          const hint = imageMapHint(value, registry);
          if (hint) setAt(hints, [...path, key], hint);
          continue;
        }
        if (typeof value === 'string') {
          const ref = parseOrUndefined(value);
          if (ref && !isInLocalRegistry(ref, registry)) setAt(hints, [...path, key], rewriteImageReference(ref, registry));
          continue;
        }
      }
      if (isValues(value)) visit(value, [...path, key]);
    }
  };
  if (isValues(chartValues)) visit(chartValues, []);
  if (usesGlobalRegistry) setAt(hints, ['global', 'imageRegistry'], registry.address);
  return hints;
}

function imageMapHint(image: Values, registry: LocalRegistry): Values | undefined {
  const { repository } = image;
  if (typeof repository !== 'string' || repository === '' || repository.includes('{{')) return undefined;
  // A tag or digest inside `repository` is too unusual to guess how the template joins it.
  if (repository.includes('@') || repository.lastIndexOf(':') > repository.lastIndexOf('/')) return undefined;
  const hasRegistry = 'registry' in image;
  const prefix = hasRegistry && typeof image.registry === 'string' ? image.registry : '';
  const source = prefix ? `${prefix}/${repository}` : repository;
  const ref = parseOrUndefined(source);
  if (!ref) return undefined;
  if (isInLocalRegistry(ref, registry)) {
    // Already local. Still restate it as address + rest when global.imageRegistry may override
    // the per-image registry: host + `app/x` would otherwise become address + `app/x`.
    if (!hasRegistry) return undefined;
    const rest = registry.namespace ? ref.repository.slice(registry.namespace.length + 1) : ref.repository;
    return image.registry === registry.address && repository === rest ? undefined : { registry: registry.address, repository: rest };
  }
  const last = ref.repository.slice(ref.repository.lastIndexOf('/') + 1);
  return hasRegistry ? { registry: registry.address, repository: last } : { repository: `${registry.address}/${last}` };
}

function isImageKey(key: string): boolean {
  return key === 'image' || /^[a-z][A-Za-z0-9]*Image$/.test(key);
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
