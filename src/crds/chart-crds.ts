// The CRDs of a render, pure: each with where it comes from. `helm template --include-crds` puts
// the crds/ folders' files (subcharts' included, disabled subcharts left out as helm leaves them
// out) in the stream with `# Source: <chart>/crds/<file>` (`<chart>/charts/<sub>/crds/<file>`);
// a CRD a template renders has `<chart>/templates/...`. Helm installs the first kind once and
// never again; the second it applies like any object of the release.
import { createHash } from 'node:crypto';
import { documentValues } from '../rendered/document-values.js';
import { type ManifestPiece, sourceComment, splitManifestStream } from '../rendered/manifest-stream.js';

export type Obj = Record<string, unknown>;

export interface ChartCrd {
  name: string;
  /** crds/: helm's install-once folder; templates: applied by helm's upgrade like the rest. */
  origin: 'crds' | 'templates';
  /** The file, as helm names it in `# Source:`. */
  source: string;
  body: Obj;
  /**
   * `sha256:<hex>` of the text of the document it was read from (applied-digest.ts): the same
   * text reads as the same CRD, so equal digests say the CRD is the same without reading it.
   */
  digest: string;
}

export function chartCrds(manifests: string): ChartCrd[] {
  const out: ChartCrd[] = [];
  for (const { piece, source } of piecesWithSource(manifests)) {
    if (!piece.text.includes('CustomResourceDefinition')) continue;
    let digest: string | undefined;
    // Read once a run: the RBAC preflight read them already (document-values.ts).
    for (const body of documentValues(piece)) {
      if (!isCrd(body)) continue;
      const name = String((body.metadata as Obj | undefined)?.name ?? '');
      digest ??= textDigest(piece.text);
      out.push({ name, origin: inCrdsFolder(source) ? 'crds' : 'templates', source, body, digest });
    }
  }
  return out;
}

function textDigest(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/**
 * Each piece of helm's stream with the file it came from. Helm writes `# Source:` once per file,
 * then the file's text: a crds/ file that starts with its own `---` (or a comment, then `---`)
 * puts its documents in pieces after the one holding the comment, so a piece without a Source
 * line belongs to the last file named.
 */
export function piecesWithSource(manifests: string): { piece: ManifestPiece; source: string }[] {
  let source = '';
  return splitManifestStream(manifests).map((piece) => {
    source = sourceComment(piece.text) ?? source;
    return { piece, source };
  });
}

/**
 * Pure: whether helm's Source path is a file of a crds/ folder: `<chart>/crds/...`, or the same
 * under subcharts (`<chart>/charts/<sub>/crds/...`). A subchart named `crds` (`<chart>/charts/
 * crds/templates/...`) or a templates/crds/ folder is templates.
 */
export function inCrdsFolder(source: string): boolean {
  const parts = source.split('/');
  let at = 1;
  while (parts[at] === 'charts' && at + 2 < parts.length) at += 2;
  return parts[at] === 'crds' && at + 1 < parts.length;
}

function isCrd(o: unknown): o is Obj {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return false;
  const x = o as Obj;
  return (
    x.kind === 'CustomResourceDefinition' &&
    typeof x.apiVersion === 'string' &&
    x.apiVersion.startsWith('apiextensions.k8s.io/')
  );
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
}

/** A CRD's versions as its spec lists them. */
export function crdVersions(crd: Obj): CrdVersion[] {
  const spec = (crd.spec ?? {}) as { versions?: { name?: unknown; served?: unknown; storage?: unknown }[] };
  return (spec.versions ?? [])
    .filter((v) => typeof v?.name === 'string')
    .map((v) => ({ name: String(v.name), served: v.served === true, storage: v.storage === true }));
}

/** The versions the API server has stored objects in (status.storedVersions of a live CRD). */
export function storedVersions(live: Obj): string[] {
  const status = (live.status ?? {}) as { storedVersions?: unknown };
  return Array.isArray(status.storedVersions)
    ? status.storedVersions.filter((v): v is string => typeof v === 'string')
    : [];
}

/** `group`, `plural`, scope and kind: what a migration lists and writes. */
export function crdNames(crd: Obj): { group: string; plural: string; kind: string; namespaced: boolean } {
  const spec = (crd.spec ?? {}) as { group?: unknown; scope?: unknown; names?: { plural?: unknown; kind?: unknown } };
  return {
    group: String(spec.group ?? ''),
    plural: String(spec.names?.plural ?? ''),
    kind: String(spec.names?.kind ?? ''),
    namespaced: spec.scope !== 'Cluster',
  };
}
