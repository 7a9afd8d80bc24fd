// The READMEs of an export, pure. The top one (README.md) says how to push and apply the export
// and how to propose a new one; it holds nothing that a chart version or a value changes, so an
// upgrade's diff stays in the release folders. What the export had to decide for the user
// (objects in full, hooks left out, images rewritten) is named beside what it concerns:
// <release>/base/README.md for what the vendor's render gives, <release>/overlay/README.md for
// what the customer's values add. Nothing is silently lost, and a new vendor version still
// touches base/ only, a change of values overlay/ only.
import type { ExportRelease, ImageRewrite } from './export-release.js';
import type { FluxSource, GitSource } from './flux-files.js';
import type { RenderedObject } from './manifest-documents.js';
import type { OverlaySplit } from './overlay-split.js';
import { isTestHook } from './overlay-split.js';

export interface ReleaseOutcome {
  release: ExportRelease;
  plan: OverlaySplit;
  vendorFailure?: string;
  /** The vendor's render's airgap rewrites and helm test hooks (base/README.md names them). */
  vendor: { rewrites: ImageRewrite[]; tests: RenderedObject[] };
}

export function exportReadme(outcomes: ReleaseOutcome[], source: FluxSource): string {
  const secretFolders = outcomes.filter((x) => x.plan.secrets.length > 0).map((x) => `${x.release.folder}/secrets/`);
  const where =
    source.kind === 'GitRepository'
      ? 'the branch of the git repository this folder is committed to'
      : 'the OCI artifact this folder is pushed as';
  return [
    '# Export for GitOps (rendered form)',
    '',
    'Written by `helm-installer export`. Re-export the same inputs: the same bytes. A new vendor',
    'version changes `<release>/base/` only; your values change `<release>/overlay/` only.',
    '',
    '## Layout',
    '',
    `- \`flux/\`: \`source.yaml\`, the ${source.kind} that reads ${where}; \`kustomizations.yaml\`, one Flux Kustomization per release, in order (\`dependsOn\`); \`root.yaml\`, the Kustomization of \`flux/\` itself, so that a release a later export drops loses its Kustomization and Flux prunes its objects.`,
    "- `<release>/base/`: what the vendor's chart and values produce, images already pointing at your registry; its README.md names the chart's version and what the export decided for it.",
    '- `<release>/overlay/`: your changes: JSON6902 patches (`patches/`), objects your values add, `$patch: delete` for objects they remove; its README.md names what the export decided for your values.',
    '- `<release>/secrets/`: every Secret of the release, with its values in clear.',
    '- CRDs carry `kustomize.toolkit.fluxcd.io/prune: disabled` (a patch in base/): as helm never deletes a CRD, Flux never prunes one, and with it every custom resource in the cluster.',
    '',
    '## Secrets',
    '',
    secretFolders.length > 0
      ? `These folders hold secret values in clear: ${secretFolders.map((f) => `\`${f}\``).join(', ')}.`
      : 'No release has a Secret.',
    "Encrypt each file there with SOPS before it leaves this machine (`sops --encrypt --in-place --encrypted-regex '^(data|stringData)$' FILE`; the Kustomizations decrypt with `decryption.provider: sops`, give them your key's Secret as `decryption.secretRef`), or create the Secret yourself and remove its file from that folder's kustomization.yaml.",
    ...(source.kind === 'GitRepository'
      ? [
          'A later export into this folder keeps a file there that you encrypted (it has a `sops:` key) and says so: update it yourself when the Secret changes.',
        ]
      : []),
    '',
    ...(source.kind === 'GitRepository' ? gitSteps(source) : ociSteps(source)),
    '## Hooks',
    '',
    "Helm hooks (a pre-upgrade migration Job) are ordinary objects here: Flux applies them with the rest, not before, and does not delete them after they ran. A Job's template cannot change: when an upgrade changes one, delete the Job (or annotate it `kustomize.toolkit.fluxcd.io/force: enabled`). `helm test` hooks are not exported.",
    '',
  ].join('\n');
}

function ociSteps(source: Extract<FluxSource, { kind: 'OCIRepository' }>): string[] {
  return [
    '## Push and apply',
    '',
    '```',
    `flux push artifact oci://${source.repository}:${source.tag} --path=. --source=helm-installer --revision=${source.tag}${source.insecure ? ' --insecure-registry' : ''}`,
    'kubectl apply -f flux/source.yaml -f flux/root.yaml   # once: from then on Flux applies flux/ itself',
    '```',
    '',
  ];
}

function gitSteps(source: GitSource): string[] {
  const at = source.path === '.' ? '.' : source.path;
  return [
    '## Commit and apply',
    '',
    `Flux follows the branch \`${source.branch}\` of ${source.url}, this folder at \`${at}\` in it (a private repository: add the Secret with its credentials as \`spec.secretRef\` in flux/source.yaml).`,
    '',
    '```',
    `git add -A ${at} && git commit -m "Export of the app" && git push origin HEAD:${source.branch}`,
    'kubectl apply -f flux/source.yaml -f flux/root.yaml   # once: from then on Flux applies flux/ itself',
    '```',
    '',
    '## Propose an upgrade or a change of values as a pull request',
    '',
    'Export again into this folder, on a branch of its own, with the same options and the new chart or values: only what changed is rewritten, so the diff is the change (a new vendor version: `<release>/base/` only; your values: `<release>/overlay/` only; a release added or removed: its folder and `flux/kustomizations.yaml`).',
    '',
    '```',
    `git switch -c upgrade ${source.branch}`,
    `helm-installer export --source git --out ${at} ...   # the same options, the new chart or values`,
    `git diff --stat -- ${at}                              # review: what the new version or values change`,
    `git add -A ${at} && git commit -m "Upgrade" && git push -u origin upgrade`,
    '```',
    '',
    `Open a pull request from \`upgrade\` into \`${source.branch}\`; once it is merged, Flux applies it (pruning what the new export dropped).`,
    '',
  ];
}

const rewriteKey = (r: ImageRewrite) => JSON.stringify([r.kind, r.namespace, r.name, r.path, r.from, r.to, r.via]);
const objectKey = (o: RenderedObject) => o.id;
const rewriteLine = (r: ImageRewrite) =>
  `- ${r.kind}/${r.name} ${r.path}${r.via ? ` (${r.via})` : ''}: ${r.from} rewritten to ${r.to}.`;
const testLine = (t: RenderedObject) => `- ${t.kind}/${t.name} (helm test hook) is not exported.`;

/** base/README.md: the chart, and what the export decided about the vendor's render. */
export function baseReadme(x: ReleaseOutcome): string {
  const lines = [
    ...(x.vendorFailure
      ? [
          `- The chart does not render with the vendor's values alone (${x.vendorFailure}): every object is in the overlay in full and base/ is empty.`,
        ]
      : []),
    ...x.vendor.tests.filter(isTestHook).map(testLine),
    ...x.vendor.rewrites.map(rewriteLine),
  ];
  const head = [
    `# ${x.release.folder}: the vendor's base`,
    '',
    `Chart ${x.release.chart.name} ${x.release.chart.version}, namespace ${x.release.namespace}.`,
    '',
  ];
  return [
    ...head,
    ...(lines.length > 0
      ? lines
      : ["Nothing to note: every object is as the chart renders it with the vendor's values."]),
    '',
  ].join('\n');
}

/** overlay/README.md: what the export decided about the customer's values (what base/README.md does not already say). */
export function overlayReadme(x: ReleaseOutcome): string {
  const vendorRewrites = new Set(x.vendor.rewrites.map(rewriteKey));
  const vendorTests = new Set(x.vendor.tests.map(objectKey));
  const lines = [
    ...x.plan.inFull.map((f) => `- ${f.object.kind}/${f.object.name} is in the overlay in full: ${f.reason}.`),
    ...x.plan.tests.filter((t) => !vendorTests.has(objectKey(t))).map(testLine),
    ...x.release.imageRewrites.filter((r) => !vendorRewrites.has(rewriteKey(r))).map(rewriteLine),
  ];
  const head = [`# ${x.release.folder}: your values`, ''];
  return [
    ...head,
    ...(lines.length > 0
      ? lines
      : ['Nothing to note beyond base/README.md: the patches here are what your values change.']),
    '',
  ].join('\n');
}
