// The Flux objects at the top of the export, pure: one OCIRepository (the export itself, pushed
// as an OCI artifact to the customer's registry: a source that works in an airgap) and one
// Kustomization per release, applying its overlay in the plan's order (dependsOn), waiting for
// what it applied to be healthy, pruning what a new export no longer holds.
import { stringify } from 'yaml';
import type { ExportRelease } from './export-release.js';

export interface FluxSource {
  /** The OCIRepository's name (the app's). */
  name: string;
  /** `host[:port]/path`, without `oci://`. */
  repository: string;
  tag: string;
  insecure: boolean;
}

export const FLUX_NAMESPACE = 'flux-system';

export function ociRepository(source: FluxSource): string {
  return stringify(
    {
      apiVersion: 'source.toolkit.fluxcd.io/v1',
      kind: 'OCIRepository',
      metadata: { name: source.name, namespace: FLUX_NAMESPACE },
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
    metadata: { name: r.folder, namespace: FLUX_NAMESPACE },
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
