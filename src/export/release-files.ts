// One release's folder as files, pure: base/, overlay/ and secrets/, each a kustomization. File
// names come from kind and name (not a position), so a vendor's new object adds one file and a
// reviewable diff stays one file wide; kustomization.yaml lists them in order, CRDs first.
import { stringify } from 'yaml';
import { groupOf, versionOf, type RenderedObject } from './manifest-documents.js';
import type { OverlaySplit } from './overlay-split.js';

export type Files = Map<string, string>;

const HEADER = { apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' };

/**
 * Flux never prunes a CRD of the export, as helm never deletes one: pruning it would delete every
 * custom resource of its kind in the cluster. A patch rather than an edit of helm's text, so the
 * objects' files stay helm's bytes; with a target, kustomize patches every CRD whatever its name.
 */
const KEEP_CRDS = {
  target: { group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' },
  patch: stringify(
    {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'any', annotations: { 'kustomize.toolkit.fluxcd.io/prune': 'disabled' } },
    },
    { lineWidth: 0 },
  ),
};

/** `<kind>-<name>.yaml`, the namespace added where two objects share both, then a counter. */
export function fileNames(objects: RenderedObject[]): Map<RenderedObject, string> {
  const names = new Map<RenderedObject, string>();
  const taken = new Set<string>();
  for (const o of objects) {
    const stem = `${o.kind}-${o.name}`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
    let name = `${stem}.yaml`;
    if (taken.has(name) && o.namespace) name = `${stem}.${o.namespace}.yaml`;
    for (let n = 2; taken.has(name); n += 1) name = `${stem}-${n}.yaml`;
    taken.add(name);
    names.set(o, name);
  }
  return names;
}

export function releaseFiles(plan: OverlaySplit): Files {
  const files: Files = new Map();
  addFolder(files, 'base', plan.base, []);
  if (plan.secrets.length > 0) addFolder(files, 'secrets', plan.secrets, []);
  const upstream = ['../base', ...(plan.secrets.length > 0 ? ['../secrets'] : [])];
  // A patch file is named after the object it patches (JSON: the operations' values keep their types exactly).
  const patchNames = fileNames(plan.patches.map((p) => p.object));
  const patches = plan.patches.map((p) => ({
    path: `patches/${patchNames.get(p.object)!.replace(/\.yaml$/, '.json')}`,
    target: targetOf(p.object),
  }));
  for (const [i, p] of plan.patches.entries())
    files.set(`overlay/${patches[i]!.path}`, `${JSON.stringify(p.operations, null, 2)}\n`);
  const deletes = plan.removed.map((o) => ({ patch: deletePatch(o) }));
  addFolder(files, 'overlay', plan.added, upstream, [...patches, ...deletes]);
  return files;
}

function addFolder(
  files: Files,
  folder: string,
  objects: RenderedObject[],
  upstream: string[],
  patches: unknown[] = [],
): void {
  const names = fileNames(objects);
  for (const o of objects) files.set(`${folder}/${names.get(o)}`, o.text);
  if (objects.some((o) => o.kind === 'CustomResourceDefinition')) patches = [...patches, KEEP_CRDS];
  const kustomization = {
    ...HEADER,
    resources: [...upstream, ...objects.map((o) => names.get(o)!)],
    ...(patches.length > 0 ? { patches } : {}),
  };
  files.set(`${folder}/kustomization.yaml`, stringify(kustomization, { lineWidth: 0 }));
}

/** kustomize's patch target: the object's group, version, kind, name (and namespace when it has one). */
function targetOf(o: RenderedObject): Record<string, string> {
  const group = groupOf(o.apiVersion);
  return {
    ...(group ? { group } : {}),
    version: versionOf(o.apiVersion),
    kind: o.kind,
    name: o.name,
    ...(o.namespace ? { namespace: o.namespace } : {}),
  };
}

function deletePatch(o: RenderedObject): string {
  const metadata = { name: o.name, ...(o.namespace ? { namespace: o.namespace } : {}) };
  return stringify({ apiVersion: o.apiVersion, kind: o.kind, metadata, $patch: 'delete' }, { lineWidth: 0 });
}
