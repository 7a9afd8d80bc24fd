// A rendered stream as the export reads it: one entry per object, with helm's exact text (written
// out byte for byte, so no YAML dialect question can change a value on the way) and its parsed
// body (compared to find what the customer's values change). Parsed with the installer's own
// reader of helm's YAML (go-yaml's dialect), the one drift and the rewrite use.
import { manifestObjects } from '../drift/manifest-objects.js';
import type { Obj } from '../cluster/object-client.js';
import { splitManifestStream } from '../rendered/manifest-stream.js';

export interface RenderedObject {
  /** `group/Kind/namespace/name`: the same object in two renders, whatever its apiVersion's version. */
  id: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  /** The `helm.sh/hook` annotation, when the object is a hook. */
  hook?: string;
  /** helm's text of the document (its `# Source:` comment included), ending in a line break. */
  text: string;
  body: Obj;
}

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
}

export function versionOf(apiVersion: string): string {
  return apiVersion.slice(apiVersion.lastIndexOf('/') + 1);
}

/** The stream's objects in helm's order; empty documents skipped. */
export function renderedObjects(stream: string): RenderedObject[] {
  const out: RenderedObject[] = [];
  for (const piece of splitManifestStream(stream)) {
    const bodies = manifestObjects(piece.text);
    // A `kind: List` is several objects in one document: each gets its own text, from its body.
    const single = bodies.length === 1;
    for (const body of bodies)
      out.push(describe(body, single ? documentText(piece.text) : `${JSON.stringify(body, null, 2)}\n`));
  }
  return out;
}

function describe(body: Obj, text: string): RenderedObject {
  const apiVersion = String(body.apiVersion);
  const kind = String(body.kind);
  const metadata = (body.metadata ?? {}) as {
    name?: unknown;
    namespace?: unknown;
    annotations?: Record<string, unknown>;
  };
  const name = String(metadata.name ?? '');
  const namespace =
    typeof metadata.namespace === 'string' && metadata.namespace !== '' ? metadata.namespace : undefined;
  const hook = metadata.annotations?.['helm.sh/hook'];
  return {
    id: `${groupOf(apiVersion)}/${kind}/${namespace ?? ''}/${name}`,
    apiVersion,
    kind,
    name,
    namespace,
    hook: typeof hook === 'string' ? hook : undefined,
    text,
    body,
  };
}

/** A document's text without its `---` line, ending in exactly one line break. */
function documentText(text: string): string {
  return `${text.replace(/^---[^\n]*\n/, '').replace(/\s+$/, '')}\n`;
}
