// The README.md at the top of an export, pure: how to push it and apply it, which files are
// secrets, and everything the export had to decide for the user (objects in full, hooks left out,
// images rewritten) named so nothing is silently lost.
import type { ExportRelease } from './export-release.js';
import type { FluxSource } from './flux-files.js';
import type { OverlayPlan } from './overlay-plan.js';

export interface ReleaseOutcome {
  release: ExportRelease;
  plan: OverlayPlan;
  vendorFailure?: string;
}

export function exportReadme(outcomes: ReleaseOutcome[], source: FluxSource): string {
  const secretFolders = outcomes.filter((x) => x.plan.secrets.length > 0).map((x) => `${x.release.folder}/secrets/`);
  return [
    '# Export for GitOps (rendered form)',
    '',
    'Written by `helm-installer export`. Re-export the same inputs: the same bytes. A new vendor',
    'version changes `<release>/base/` only; your values change `<release>/overlay/` only.',
    '',
    '## Layout',
    '',
    '- `flux/`: `source.yaml`, the OCIRepository this folder is pushed to; `kustomizations.yaml`, one Flux Kustomization per release, in order (`dependsOn`); `root.yaml`, the Kustomization of `flux/` itself, so that a release a later export drops loses its Kustomization and Flux prunes its objects.',
    '- `<release>/base/`: what the vendor\'s chart and values produce, images already pointing at your registry.',
    '- `<release>/overlay/`: your changes: JSON6902 patches (`patches/`), objects your values add, `$patch: delete` for objects they remove.',
    '- `<release>/secrets/`: every Secret of the release, with its values in clear.',
    '- CRDs carry `kustomize.toolkit.fluxcd.io/prune: disabled` (a patch in base/): as helm never deletes a CRD, Flux never prunes one, and with it every custom resource in the cluster.',
    '',
    '## Secrets',
    '',
    secretFolders.length > 0 ? `These folders hold secret values in clear: ${secretFolders.map((f) => `\`${f}\``).join(', ')}.` : 'No release has a Secret.',
    'Encrypt each file there with SOPS before it leaves this machine (`sops --encrypt --in-place --encrypted-regex \'^(data|stringData)$\' FILE`; the Kustomizations decrypt with `decryption.provider: sops`, give them your key\'s Secret as `decryption.secretRef`), or create the Secret yourself and remove its file from that folder\'s kustomization.yaml.',
    '',
    '## Push and apply',
    '',
    '```',
    `flux push artifact oci://${source.repository}:${source.tag} --path=. --source=helm-installer --revision=${source.tag}${source.insecure ? ' --insecure-registry' : ''}`,
    'kubectl apply -f flux/source.yaml -f flux/root.yaml   # once: from then on Flux applies flux/ itself',
    '```',
    '',
    '## Hooks',
    '',
    'Helm hooks (a pre-upgrade migration Job) are ordinary objects here: Flux applies them with the rest, not before, and does not delete them after they ran. A Job\'s template cannot change: when an upgrade changes one, delete the Job (or annotate it `kustomize.toolkit.fluxcd.io/force: enabled`). `helm test` hooks are not exported.',
    '',
    ...outcomes.flatMap(notes),
  ].join('\n');
}

function notes(x: ReleaseOutcome): string[] {
  const lines = [
    ...(x.vendorFailure ? [`- The chart does not render with the vendor's values alone (${x.vendorFailure}): every object is in the overlay in full and base/ is empty.`] : []),
    ...x.plan.inFull.map((f) => `- ${f.object.kind}/${f.object.name} is in the overlay in full: ${f.reason}.`),
    ...x.plan.tests.map((t) => `- ${t.kind}/${t.name} (helm test hook) is not exported.`),
    ...x.release.imageRewrites.map((r) => `- ${r.kind}/${r.name} ${r.path}${r.via ? ` (${r.via})` : ''}: ${r.from} rewritten to ${r.to}.`),
  ];
  if (lines.length === 0) return [];
  return [`## ${x.release.folder}`, '', `Chart ${x.release.chart.name} ${x.release.chart.version}, namespace ${x.release.namespace}.`, '', ...lines, ''];
}
