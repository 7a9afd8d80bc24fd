// The airgap's image pull secret (our rewrite adds it to every pod spec's imagePullSecrets) as
// postRenderers kustomize patches: a strategic merge per built-in kind with a pod spec, so the
// entry joins the list (merged by name) rather than replacing it. Pod specs in other kinds (a
// custom resource's) have no merge schema in kustomize: named in the notes instead.
import { toYaml } from './yaml-text.js';

export interface KustomizePatch {
  patch: string;
  target: { kind: string };
}

/** Each kind, and the path of its pod spec. */
const POD_SPECS: Array<{ apiVersion: string; kind: string; path: string[] }> = [
  { apiVersion: 'apps/v1', kind: 'Deployment', path: ['spec', 'template', 'spec'] },
  { apiVersion: 'apps/v1', kind: 'StatefulSet', path: ['spec', 'template', 'spec'] },
  { apiVersion: 'apps/v1', kind: 'DaemonSet', path: ['spec', 'template', 'spec'] },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', path: ['spec', 'template', 'spec'] },
  { apiVersion: 'batch/v1', kind: 'Job', path: ['spec', 'template', 'spec'] },
  { apiVersion: 'batch/v1', kind: 'CronJob', path: ['spec', 'jobTemplate', 'spec', 'template', 'spec'] },
  { apiVersion: 'v1', kind: 'Pod', path: ['spec'] },
];

/** Pure: the patches, and the note on what they leave out. */
export function pullSecretPatches(secret: string | undefined): { patches: KustomizePatch[]; notes: string[] } {
  if (secret === undefined) return { patches: [], notes: [] };
  const patches = POD_SPECS.map(({ apiVersion, kind, path }) => {
    // kustomize applies the patch to every object the target selects, whatever name it gives.
    const body = path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), {
      imagePullSecrets: [{ name: secret }],
    });
    return {
      patch: toYaml({ apiVersion, kind, metadata: { name: 'image-pull-secret' }, ...(body as object) }),
      target: { kind },
    };
  });
  const kinds = POD_SPECS.map((p) => p.kind).join(', ');
  return {
    patches,
    notes: [
      `image pull secret ${secret}: added to the pod specs of ${kinds}; pod specs inside other kinds (custom resources) do not get it`,
    ],
  };
}
