// The Flux objects of the export (its flux/ folder), pure: one OCIRepository (the export itself,
// pushed as an OCI artifact to the customer's registry: a source that works in an airgap), one
// Kustomization per release, applying its overlay in the plan's order (dependsOn), waiting for
// what it applied to be healthy, pruning what a new export no longer holds; and a root
// Kustomization that applies flux/ itself, so that a release the next export drops loses its
// Kustomization, and Flux, deleting it, prunes the release's objects (Flux's own bootstrap keeps
// its sync objects the same way).
import { stringify } from 'yaml';
import type { ExportRelease } from './export-release.js';

export interface FluxSource {
  /** The OCIRepository's name (the app's). */
  name: string;
  /** `host[:port]/path`, without `oci://`. */
  repository: string;
  tag: string;
  insecure: boolean;
  /** Where the Flux objects go (--flux-namespace). */
  namespace: string;
}

export function ociRepository(source: FluxSource): string {
  return stringify(
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata: { name: source.name, namespace: source.namespace },
      spec: { interval: '10m', url: `oci://${source.repository}`, ref: { tag: source.tag }, ...(source.insecure ? { insecure: true } : {}) },
    },
    { lineWidth: 0 },
  );
}

export function kustomizations(releases: ExportRelease[], source: FluxSource, withSecrets: Set<string>): string {
  return releases.map((r) => stringify(kustomization(r, source, withSecrets.has(r.folder)), { lineWidth: 0 })).join('---\n');
}

function kustomization(r: ExportRelease, source: FluxSource, hasSecrets: boolean): unknown {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: r.folder, namespace: source.namespace },
    spec: {
      interval: '10m',
      path: `./${r.folder}/overlay`,
      sourceRef: { kind: 'OCIRepository', name: source.name },
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
export function rootKustomization(source: FluxSource): string {
  return stringify(
    {
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: `${source.name}-flux`, namespace: source.namespace },
      spec: { interval: '10m', path: './flux', sourceRef: { kind: 'OCIRepository', name: source.name }, prune: true, wait: false },
    },
    { lineWidth: 0 },
  );
}

/** flux/'s files: what the root Kustomization applies. */
export function fluxFolder(releases: ExportRelease[], source: FluxSource, withSecrets: Set<string>): Map<string, string> {
  const resources = ['source.yaml', 'root.yaml', 'kustomizations.yaml'];
  return new Map([
    ['flux/source.yaml', ociRepository(source)],
    ['flux/root.yaml', rootKustomization(source)],
    ['flux/kustomizations.yaml', kustomizations(releases, source, withSecrets)],
    ['flux/kustomization.yaml', stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }, { lineWidth: 0 })],
  ]);
}
