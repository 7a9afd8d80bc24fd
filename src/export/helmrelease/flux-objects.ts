// The Flux objects of one release, as plain objects in the order their fields are written:
// the chart's OCIRepository and the HelmRelease. Field by field, what our install does:
// - install: helm's --rollback-on-failure (--atomic) removes a failed first install: no retry,
//   remediate the last failure (uninstall); --create-namespace.
// - upgrade: a failed upgrade is rolled back: no retry, remediate the last failure (rollback).
// - test: --test-failure rollback remediates as above; keep skips remediation (ignoreFailures).
// - --crds: Flux's install.crds and upgrade.crds (Flux checks no stored version: a CRD that drops
//   one fails there as with plain helm; install migrates it).
// - --take-ownership: Flux adopts objects on install and upgrade unless told not to;
//   first-install (ours by default) adopts on the install only.
// - the release's records stay in its namespace under its name (releaseName, storageNamespace),
//   so helm-controller takes over a release our Job installed rather than installing a second.
import { APP_SLUG_ANNOTATION } from '../../common/app-slug.js';
import { InvalidInputError } from '../../common/errors.js';
import { driftDetection } from './drift.js';
import type { KustomizeImage } from './images.js';
import type { KustomizePatch } from './pull-secret.js';
import type { HelmReleaseInput, HelmReleaseOptions } from './input.js';
import { chartTag, type ReleaseNames } from './names.js';

const HELM_CHART_MEDIA_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip';
// Flux's duration pattern (the CRD's): Go durations without the us/ns units.
const FLUX_DURATION = /^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$/;

export interface Placement {
  /** Where Flux's objects live. */
  namespace: string;
  interval: string;
  registry: HelmReleaseOptions['registry'];
}

/** The OCI repository `helm push <tgz> oci://<address>/<chartPath>` writes the chart to. */
export function chartRepository(registry: Placement['registry'], chart: string): string {
  return `${registry.address}/${registry.chartPath ?? 'charts'}/${chart}`;
}

export function ociRepository(r: HelmReleaseInput, names: ReleaseNames, at: Placement): object {
  return {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'OCIRepository',
    metadata: { name: names.object, namespace: at.namespace },
    spec: {
      interval: at.interval,
      url: `oci://${chartRepository(at.registry, r.chart.name)}`,
      ref: { tag: chartTag(r.chart.version) },
      layerSelector: { mediaType: HELM_CHART_MEDIA_TYPE, operation: 'copy' },
      ...(at.registry.insecure ? { insecure: true } : {}),
      ...(at.registry.pullSecretName ? { secretRef: { name: at.registry.pullSecretName } } : {}),
    },
  };
}

export interface ReleaseParts {
  names: ReleaseNames;
  /** Names of the HelmReleases this one depends on. */
  dependsOn: string[];
  valuesFrom: object[];
  images: KustomizeImage[];
  patches: KustomizePatch[];
}

/** install's --crds as Flux names it; Flux's upgrade default is Skip, helm's own. */
const FLUX_CRD_POLICY = { 'create-replace': 'CreateReplace', create: 'Create', skip: 'Skip' } as const;

export function helmRelease(r: HelmReleaseInput, p: ReleaseParts, at: Placement): { object: object; notes: string[] } {
  const drift = driftDetection(r.drift);
  const spec = {
    interval: at.interval,
    chartRef: { kind: 'OCIRepository', name: p.names.object, namespace: at.namespace },
    releaseName: r.release,
    targetNamespace: r.namespace,
    storageNamespace: r.namespace,
    ...(p.dependsOn.length > 0 ? { dependsOn: p.dependsOn.map((name) => ({ name, namespace: at.namespace })) } : {}),
    timeout: fluxDuration(r.timeout, r, '--timeout'),
    maxHistory: r.historyMax,
    install: {
      createNamespace: true,
      crds: FLUX_CRD_POLICY[r.crds],
      ...(r.takeOwnership === 'never' ? { disableTakeOwnership: true } : {}),
      remediation: { retries: 0, remediateLastFailure: true },
    },
    upgrade: {
      crds: FLUX_CRD_POLICY[r.crds],
      ...(r.takeOwnership === 'always' ? {} : { disableTakeOwnership: true }),
      remediation: { retries: 0, remediateLastFailure: true, strategy: 'rollback' },
    },
    ...(r.test.enabled ? { test: testSpec(r) } : {}),
    driftDetection: drift.spec,
    valuesFrom: p.valuesFrom,
    // Every object helm-controller applies gets it, as every object our post-render annotates.
    ...(r.appSlug !== undefined ? { commonMetadata: { annotations: { [APP_SLUG_ANNOTATION]: r.appSlug } } } : {}),
    ...postRenderers(p),
  };
  const object = {
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: p.names.object, namespace: at.namespace },
    spec,
  };
  return { object, notes: drift.notes };
}

/** The airgap rewrite, as far as kustomize says it: absent when it changes nothing. */
function postRenderers(p: ReleaseParts): { postRenderers?: object[] } {
  if (p.patches.length === 0 && p.images.length === 0) return {};
  const kustomize = {
    ...(p.patches.length > 0 ? { patches: p.patches } : {}),
    ...(p.images.length > 0 ? { images: p.images } : {}),
  };
  return { postRenderers: [{ kustomize }] };
}

function testSpec(r: HelmReleaseInput): object {
  const timeout = fluxDuration(r.test.timeout, r, '--test-timeout');
  return r.test.failure === 'keep' ? { enable: true, timeout, ignoreFailures: true } : { enable: true, timeout };
}

/** A Go duration Flux accepts as written; one in µs or ns (or 0) cannot be said. */
function fluxDuration(value: string, r: HelmReleaseInput, flag: string): string {
  if (FLUX_DURATION.test(value)) return value;
  throw new InvalidInputError(
    `release ${r.namespace}/${r.release}: ${flag} ${JSON.stringify(value)} cannot be written in a HelmRelease (Flux takes durations in h, m, s or ms)`,
    {
      key: flag,
      hint: `Give ${flag} in h, m, s or ms, e.g. 10m.`,
    },
  );
}
