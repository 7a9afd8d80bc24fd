// Where the specs run, for the two forms `troubleshoot-specs` writes (pure): `kots`, templated for
// the KOTS release (the namespace KOTS deploys to, the Job of the deployed sequence, the local
// registry's names of the images when there is one); `plain`, for the namespace and registry the
// command is given (`preflight`/`support-bundle` run by hand against manifests/).
import type { SpecTarget } from './spec-target.js';

const KOTS_NAMESPACE = 'repl{{ Namespace }}';

export interface TargetInput {
  format: 'kots' | 'plain';
  app: string;
  /** The namespace the releases without their own go to (the command's --namespace, or default). */
  installNamespace: string;
  installerJob?: string;
  images: { source: string[]; local: string[] };
  /** --image-pull-secret: the local registry's pull secret (plain form). */
  pullSecret?: string;
}

export function specTarget(i: TargetInput): SpecTarget {
  if (i.format === 'kots') {
    return {
      app: i.app,
      namespace: (ns) => (ns === i.installNamespace ? KOTS_NAMESPACE : ns),
      installNamespace: KOTS_NAMESPACE,
      installerJob: i.installerJob ?? `${i.app}-installer-repl{{ Sequence }}`,
      // KOTS pushes each image under the name LocalImageName gives, the name the installer rewrites to.
      localImages: {
        images: i.images.source.map((s) => `repl{{ LocalImageName "${s}" }}`),
        pullSecret: 'repl{{ ImagePullSecretName }}',
        exclude: 'repl{{ not HasLocalRegistry }}',
      },
    };
  }
  return {
    app: i.app,
    namespace: (ns) => ns,
    installNamespace: i.installNamespace,
    installerJob: i.installerJob ?? `${i.app}-installer`,
    ...(i.images.local.length > 0
      ? { localImages: { images: i.images.local, ...(i.pullSecret ? { pullSecret: i.pullSecret } : {}) } }
      : {}),
  };
}
