// The airgap rewrite as `postRenderers[].kustomize.images`. Kustomize's images transformer
// rewrites the `image` field of `containers[]` and `initContainers[]`, in any kind at any path,
// by image name: every other reference our rewrite changed (an env value, a flag, ConfigMap data,
// a custom resource's own field) is named in the notes, never silently lost.
import type { ImageRewrite } from '../export-release.js';

export interface KustomizeImage {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

const CONTAINER_IMAGE = /(^|\.)(containers|initContainers)\[\d+\]\.image$/;

/** A container's (or init container's) image field, written whole: what kustomize can rewrite. */
function inContainerField(r: ImageRewrite): boolean {
  return r.via === undefined && CONTAINER_IMAGE.test(r.path);
}

/** `name[:tag][@digest]` split as kustomize matches it: by the name as written. */
function splitReference(ref: string): { name: string; tag?: string; digest?: string } {
  const at = ref.indexOf('@');
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const rest = at >= 0 ? ref.slice(0, at) : ref;
  const colon = rest.lastIndexOf(':');
  const hasTag = colon > rest.lastIndexOf('/');
  const name = hasTag ? rest.slice(0, colon) : rest;
  return { name, ...(hasTag ? { tag: rest.slice(colon + 1) } : {}), ...(digest ? { digest } : {}) };
}

/** Pure: the kustomize images entries, sorted by name, and the rewrites they cannot carry. */
export function kustomizeImages(rewrites: readonly ImageRewrite[]): { images: KustomizeImage[]; notes: string[] } {
  const notes: string[] = [];
  const byName = new Map<string, ImageRewrite[]>();
  for (const r of rewrites) {
    if (!inContainerField(r)) {
      notes.push(
        `image ${r.from} -> ${r.to} in ${place(r)}: not rewritten (kustomize's images only rewrite containers' image fields); set it through the chart's values or a postRenderers patch`,
      );
      continue;
    }
    const name = splitReference(r.from).name;
    byName.set(name, [...(byName.get(name) ?? []), r]);
  }
  const images: KustomizeImage[] = [];
  for (const name of [...byName.keys()].sort()) {
    const group = byName.get(name)!;
    const entry = imageEntry(name, group);
    if (entry) images.push(entry);
    else
      for (const r of group)
        notes.push(
          `image ${r.from} -> ${r.to} in ${place(r)}: not rewritten (another reference named ${name} goes elsewhere, and kustomize rewrites by name)`,
        );
  }
  return { images, notes };
}

/** One entry for every reference of this name, when one can say them all. */
function imageEntry(name: string, group: ImageRewrite[]): KustomizeImage | undefined {
  const targets = group.map((r) => ({ from: splitReference(r.from), to: splitReference(r.to) }));
  const newNames = new Set(targets.map((t) => t.to.name));
  if (newNames.size !== 1) return undefined;
  const newName = targets[0]!.to.name;
  // Tags and digests kept as written: only the name changes, whatever each one's tag.
  if (targets.every((t) => t.from.tag === t.to.tag && t.from.digest === t.to.digest)) return { name, newName };
  const tos = new Set(group.map((r) => r.to));
  if (tos.size !== 1) return undefined;
  const to = targets[0]!.to;
  // kustomize writes a digest instead of the tag; a tag and a digest together cannot be said.
  if (to.digest && to.tag) return undefined;
  return to.digest ? { name, newName, digest: to.digest } : { name, newName, newTag: to.tag ?? 'latest' };
}

function place(r: ImageRewrite): string {
  const object = `${r.kind}/${r.namespace ? `${r.namespace}/` : ''}${r.name}`;
  return `${object} ${r.path}${r.via ? ` (${r.via})` : ''}`;
}
