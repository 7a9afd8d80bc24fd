// The CRDs of a render, pure: each with where it comes from. `helm template --include-crds` puts
// the crds/ folders' files (subcharts' included, disabled subcharts left out as helm leaves them
// out) in the stream with `# Source: <chart>/crds/<file>` (`<chart>/charts/<sub>/crds/<file>`);
// a CRD a template renders has `<chart>/templates/...`. Helm installs the first kind once and
// never again; the second it applies like any object of the release.
import { parsePiece, sourceComment, splitManifestStream } from '../images/manifest-stream.js';

export type Obj = Record<string, unknown>;

export interface ChartCrd {
  name: string;
  /** crds/: helm's install-once folder; templates: applied by helm's upgrade like the rest. */
  origin: 'crds' | 'templates';
  /** The file, as helm names it in `# Source:`. */
  source: string;
  body: Obj;
}

export function chartCrds(manifests: string): ChartCrd[] {
  const out: ChartCrd[] = [];
  for (const piece of splitManifestStream(manifests)) {
    if (!piece.text.includes('CustomResourceDefinition')) continue;
    const source = sourceComment(piece.text) ?? '';
    for (const doc of parsePiece(piece).docs) {
      const body = doc.toJS({ maxAliasCount: -1 }) as unknown;
      if (!isCrd(body)) continue;
      const name = String((body.metadata as Obj | undefined)?.name ?? '');
      out.push({ name, origin: /(^|\/)crds\//.test(source) ? 'crds' : 'templates', source, body });
    }
  }
  return out;
}

function isCrd(o: unknown): o is Obj {
  if (!o || typeof o !== 'object' || Array.isArray(o)) return false;
  const x = o as Obj;
  return x.kind === 'CustomResourceDefinition' && typeof x.apiVersion === 'string' && x.apiVersion.startsWith('apiextensions.k8s.io/');
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
}

/** A CRD's versions as its spec lists them. */
export function crdVersions(crd: Obj): CrdVersion[] {
  const spec = (crd.spec ?? {}) as { versions?: { name?: unknown; served?: unknown; storage?: unknown }[] };
  return (spec.versions ?? []).filter((v) => typeof v?.name === 'string').map((v) => ({ name: String(v.name), served: v.served === true, storage: v.storage === true }));
}

/** The versions the API server has stored objects in (status.storedVersions of a live CRD). */
export function storedVersions(live: Obj): string[] {
  const status = (live.status ?? {}) as { storedVersions?: unknown };
  return Array.isArray(status.storedVersions) ? status.storedVersions.filter((v): v is string => typeof v === 'string') : [];
}

/** `group`, `plural`, scope and kind: what a migration lists and writes. */
export function crdNames(crd: Obj): { group: string; plural: string; kind: string; namespaced: boolean } {
  const spec = (crd.spec ?? {}) as { group?: unknown; scope?: unknown; names?: { plural?: unknown; kind?: unknown } };
  return { group: String(spec.group ?? ''), plural: String(spec.names?.plural ?? ''), kind: String(spec.names?.kind ?? ''), namespaced: spec.scope !== 'Cluster' };
}
