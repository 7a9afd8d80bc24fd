// The Flux objects of the export (its flux/ folder), pure: one source, an OCIRepository (the
// export itself, pushed as an OCI artifact to the customer's registry: a source that works in an
// airgap) or a GitRepository (the export committed to a branch of the customer's repository), one
// Kustomization per release, applying its overlay in the plan's order (dependsOn), waiting for
// what it applied to be healthy, pruning what a new export no longer holds; and a root
// Kustomization that applies flux/ itself, so that a release the next export drops loses its
// Kustomization, and Flux, deleting it, prunes the release's objects (Flux's own bootstrap keeps
// its sync objects the same way).
import { stringify } from 'yaml';
import type { ExportRelease } from './export-release.js';
import { inRepository } from './git-options.js';

interface SourceCommon {
  /** The source's name (the app's). */
  name: string;
  /** Where the Flux objects go (--flux-namespace). */
  namespace: string;
}

interface OciSource extends SourceCommon {
  kind: 'OCIRepository';
  /** `host[:port]/path`, without `oci://`. */
  repository: string;
  tag: string;
  insecure: boolean;
}

export interface GitSource extends SourceCommon {
  kind: 'GitRepository';
  url: string;
  branch: string;
  /** The export's folder in the repository, `.` for its root (git-options.ts). */
  path: string;
}

export type FluxSource = OciSource | GitSource;

/** The source object: what Flux fetches the export from. */
function sourceObject(source: FluxSource): string {
  const spec =
    source.kind === 'OCIRepository'
      ? {
          interval: '10m',
          url: `oci://${source.repository}`,
          ref: { tag: source.tag },
          ...(source.insecure ? { insecure: true } : {}),
        }
      : { interval: '10m', url: source.url, ref: { branch: source.branch } };
  return stringify(
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: source.kind,
      metadata: { name: source.name, namespace: source.namespace },
      spec,
    },
    { lineWidth: 0 },
  );
}

/** A folder of the export as the Kustomization's `path` (relative to the source's root). */
function pathOf(source: FluxSource, folder: string): string {
  return source.kind === 'GitRepository' ? inRepository(source.path, folder) : `./${folder}`;
}

function kustomizations(releases: ExportRelease[], source: FluxSource, withSecrets: Set<string>): string {
  return releases
    .map((r) => stringify(kustomization(r, source, withSecrets.has(r.folder)), { lineWidth: 0 }))
    .join('---\n');
}

function kustomization(r: ExportRelease, source: FluxSource, hasSecrets: boolean): unknown {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: r.folder, namespace: source.namespace },
    spec: {
      interval: '10m',
      path: pathOf(source, `${r.folder}/overlay`),
      sourceRef: { kind: source.kind, name: source.name },
      targetNamespace: r.namespace,
      ...(r.dependsOn.length > 0 ? { dependsOn: r.dependsOn.map((name) => ({ name })) } : {}),
      prune: true,
      wait: true,
      timeout: r.timeout,
      // Only files the user encrypted with SOPS are decrypted; plain ones are applied as they are.
      ...(hasSecrets ? { decryption: { provider: 'sops' } } : {}),
    },
  };
}

/** The Kustomization of flux/ itself; its name cannot be a release's folder (a `-` then `flux`). */
function rootKustomization(source: FluxSource): string {
  return stringify(
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: `${source.name}-flux`, namespace: source.namespace },
      spec: {
        interval: '10m',
        path: pathOf(source, 'flux'),
        sourceRef: { kind: source.kind, name: source.name },
        prune: true,
        wait: false,
      },
    },
    { lineWidth: 0 },
  );
}

/** flux/'s files: what the root Kustomization applies. */
export function fluxFolder(
  releases: ExportRelease[],
  source: FluxSource,
  withSecrets: Set<string>,
): Map<string, string> {
  const resources = ['source.yaml', 'root.yaml', 'kustomizations.yaml'];
  return new Map([
    ['flux/source.yaml', sourceObject(source)],
    ['flux/root.yaml', rootKustomization(source)],
    ['flux/kustomizations.yaml', kustomizations(releases, source, withSecrets)],
    [
      'flux/kustomization.yaml',
      stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }, { lineWidth: 0 }),
    ],
  ]);
}
