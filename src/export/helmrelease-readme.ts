// The README.md at the top of an export in the HelmRelease form, pure: how to push each chart and
// apply the folder, which file holds secret values in clear, and per release what the form cannot
// say (the writer's notes), so nothing our install does is silently lost.
import type { ExportRelease } from './export-release.js';
import { chartRepository } from './helmrelease/flux-objects.js';
import { FLUX_NAMESPACE } from './helmrelease/helmrelease-files.js';
import type { HelmReleaseFiles, HelmReleaseOptions } from './helmrelease/input.js';

export interface ReadmeRelease {
  folder: string;
  release: ExportRelease;
  /** `namespace/release`, as the writer's notes name it. */
  key: string;
}

export function helmReleaseReadme(
  releases: ReadmeRelease[],
  written: HelmReleaseFiles,
  options: HelmReleaseOptions,
): string {
  const secrets = written.files.filter((f) => f.secret).map((f) => `\`${f.path}\``);
  return [
    '# Export for GitOps (HelmRelease form)',
    '',
    "Written by `helm-installer export --format helmrelease`, for clusters that run Flux's helm-controller.",
    "Each release has its folder: `ocirepository.yaml` (the chart's source), `helmrelease.yaml`, its values",
    '(`values-vendor.yaml`, `values-customer.yaml`, `values-generated.yaml`: ConfigMaps merged in that order,',
    "with `values-secret.yaml` after each layer's plain part), `kustomization.yaml`, and `chart/`: the chart",
    'archive to push. The archive is made by `helm package`: its bytes may differ from one export to the next.',
    '',
    '## Secrets',
    '',
    ...(secrets.length > 0 ? secretLines(secrets) : ['No value looks secret: there is no Secret manifest.']),
    '',
    '## Push and apply',
    '',
    '```',
    // Releases of one chart share its archive in the registry: pushed once.
    ...releases
      .filter((r, i) => releases.findIndex((x) => chartLabel(x) === chartLabel(r)) === i)
      .map((r) => pushLine(r, options)),
    'kubectl apply -k .',
    '```',
    '',
    `The Flux objects go to the namespace ${options.namespace ?? FLUX_NAMESPACE}; each release's objects to its own namespace.`,
    '',
    ...releases.flatMap((r) => notes(r, written)),
  ].join('\n');
}

function secretLines(files: string[]): string[] {
  return [
    `These files hold secret values in clear: ${files.join(', ')}.`,
    "Encrypt each with SOPS before it leaves this machine (`sops --encrypt --in-place --encrypted-regex '^(data|stringData)$' FILE`),",
    "or create the Secret yourself and remove the file from its folder's kustomization.yaml.",
  ];
}

const chartLabel = (r: ReadmeRelease) => `${r.release.chart.name}-${r.release.chart.version}`;

function pushLine(r: ReadmeRelease, options: HelmReleaseOptions): string {
  const target = chartRepository(options.registry, r.release.chart.name).replace(/\/[^/]+$/, '');
  return `helm push ${r.folder}/chart/${chartLabel(r)}.tgz oci://${target}${options.registry.insecure ? ' --plain-http' : ''}`;
}

function notes(r: ReadmeRelease, written: HelmReleaseFiles): string[] {
  const own = written.notes.filter((n) => n.release === r.key).map((n) => `- ${n.what}`);
  const head = [
    `## ${r.folder}`,
    '',
    `Chart ${r.release.chart.name} ${r.release.chart.version}, release ${r.release.name} in namespace ${r.release.namespace}.`,
    '',
  ];
  return [
    ...head,
    ...(own.length > 0
      ? ['What this form does not do as our install does:', '', ...own]
      : ['Everything our install does is expressed.']),
    '',
  ];
}
