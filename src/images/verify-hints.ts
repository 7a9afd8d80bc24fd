// Values hints are only a convenience (they reach what the post-renderer cannot: hooks on helm 3,
// names an operator reads from its own values); the post-render is the guarantee. A hint that
// changes WHICH image runs is worse than none, so every hint set is checked against the chart's
// own rendering: each image of the hinted render must be the image the chart deploys without
// hints, either unchanged or under its exact KOTS name. Pure: both renders are located already.
import {
  isKotsLocalName,
  parseImageReference,
  rewriteImageReference,
  type LocalRegistry,
} from '../common/image-reference.js';
import { describeOccurrence } from './image-catalog.js';
import type { ImageOccurrence } from './manifest-images.js';

export interface HintMismatch {
  at: string;
  /** What the chart deploys without hints (absent: the location is new with the hints). */
  expected?: string;
  got: string;
}

/** A location's identity across two renders of one chart. */
function keyOf(o: ImageOccurrence, ordinal: number): string {
  return `${o.kind}\u0000${o.namespace ?? ''}\u0000${o.name}\u0000${o.path}\u0000${o.via ?? ''}\u0000${ordinal}`;
}

function keyed(occurrences: ImageOccurrence[]): Map<string, ImageOccurrence> {
  const out = new Map<string, ImageOccurrence>();
  const counts = new Map<string, number>();
  for (const o of occurrences) {
    const base = keyOf(o, 0);
    const n = counts.get(base) ?? 0;
    counts.set(base, n + 1);
    out.set(keyOf(o, n), o);
  }
  return out;
}

export function compareHintedImages(
  plain: ImageOccurrence[],
  hinted: ImageOccurrence[],
  registry: LocalRegistry,
): HintMismatch[] {
  const before = keyed(plain);
  const targets = new Set<string>();
  for (const o of plain) targets.add(kotsName(o.image, registry));
  const mismatches: HintMismatch[] = [];
  for (const [key, h] of keyed(hinted)) {
    const p = before.get(key);
    const expected = p ? kotsName(p.image, registry) : undefined;
    const ok = p
      ? h.image === p.image || isExactly(h.image, expected!, registry)
      : [...targets].some((t) => isExactly(h.image, t, registry));
    if (!ok) mismatches.push({ at: describeOccurrence(h), ...(p ? { expected: p.image } : {}), got: h.image });
  }
  return mismatches;
}

function kotsName(image: string, registry: LocalRegistry): string {
  return rewriteImageReference(image, registry);
}

/**
 * The hinted reference IS the KOTS name: same local name, nothing the post-renderer would have
 * to rename except KOTS's own rule of dropping a tag beside a digest.
 */
function isExactly(image: string, target: string, registry: LocalRegistry): boolean {
  let ref;
  try {
    ref = parseImageReference(image);
  } catch {
    return false;
  }
  if (isKotsLocalName(ref, registry)) return ref.normalized === target;
  const tagAndDigest = ref.digest !== undefined && ref.tag !== undefined;
  const prefix = registry.namespace ? `${registry.namespace}/` : '';
  const exactPath =
    ref.registry === registry.host &&
    ref.repository.startsWith(prefix) &&
    !ref.repository.slice(prefix.length).includes('/');
  return tagAndDigest && exactPath && rewriteImageReference(ref, registry) === target;
}
