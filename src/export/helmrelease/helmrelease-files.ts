// The HelmRelease form of `export`: per release, a folder with the chart's OCIRepository, the
// HelmRelease, its values (ConfigMaps, and a Secret manifest apart) and a kustomization listing
// them. Pure: the export command writes the files (and the chart archive beside them).
import { InvalidInputError } from '../../common/errors.js';
import { kustomizeImages } from './images.js';
import { helmRelease, ociRepository, type Placement } from './flux-objects.js';
import type { ExportFile, HelmReleaseFiles, HelmReleaseInput, HelmReleaseOptions, NotExpressible } from './input.js';
import { releaseKey, releaseNames, type ReleaseNames } from './names.js';
import { pullSecretPatches } from './pull-secret.js';
import { valuesObjects } from './values-objects.js';
import { toYaml } from './yaml-text.js';

export const FLUX_NAMESPACE = 'flux-system';
const DEFAULT_INTERVAL = '10m';

/** Pure: every file of the form, in a stable order, and what it cannot express. Throws exit 3. */
export function helmReleaseFiles(releases: readonly HelmReleaseInput[], options: HelmReleaseOptions): HelmReleaseFiles {
  const at: Placement = {
    namespace: options.namespace ?? FLUX_NAMESPACE,
    interval: options.interval ?? DEFAULT_INTERVAL,
    registry: options.registry,
  };
  const names = releaseNames(releases);
  const files: ExportFile[] = [];
  const notes: NotExpressible[] = [];
  for (const r of releases) {
    const made = releaseFiles(r, names, at);
    files.push(...made.files);
    notes.push(...made.notes.map((what) => ({ release: releaseKey(r), what })));
  }
  return { files, notes };
}

function releaseFiles(
  r: HelmReleaseInput,
  names: Map<string, ReleaseNames>,
  at: Placement,
): { files: ExportFile[]; notes: string[] } {
  const own = names.get(releaseKey(r))!;
  const values = valuesObjects(r, own, at.namespace);
  const images = kustomizeImages(r.images);
  const pullSecret = pullSecretPatches(r.imagePullSecret);
  const parts = {
    names: own,
    dependsOn: dependencies(r, names),
    valuesFrom: values.valuesFrom,
    images: images.images,
    patches: pullSecret.patches,
  };
  const release = helmRelease(r, parts, at);
  const dir = own.object;
  const files: ExportFile[] = [
    { path: `${dir}/ocirepository.yaml`, content: toYaml(ociRepository(r, own, at)) },
    { path: `${dir}/helmrelease.yaml`, content: toYaml(release.object) },
    ...values.configMaps.map(({ layer, object }) => ({ path: `${dir}/values-${layer}.yaml`, content: toYaml(object) })),
    ...(values.secret ? [{ path: `${dir}/values-secret.yaml`, content: toYaml(values.secret), secret: true }] : []),
  ];
  const resources = files.map((f) => f.path.slice(dir.length + 1));
  files.push({
    path: `${dir}/kustomization.yaml`,
    content: toYaml({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources }),
  });
  return { files, notes: [...images.notes, ...pullSecret.notes, ...release.notes] };
}

/** The HelmRelease names this release waits for; a dependency outside the export cannot be said. */
function dependencies(r: HelmReleaseInput, names: Map<string, ReleaseNames>): string[] {
  return r.dependsOn.map((d) => {
    const dep = names.get(releaseKey(d));
    if (dep) return dep.object;
    throw new InvalidInputError(`release ${releaseKey(r)} depends on ${releaseKey(d)}, which is not in the export`, {
      key: 'dependsOn',
      hint: 'Export every release of the plan together, or remove the dependency from the release plan.',
    });
  });
}
