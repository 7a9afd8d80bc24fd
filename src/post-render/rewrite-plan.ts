// What the rewrite of a rendered stream is asked to do (rewrite-manifests.ts), apart from it so
// that its two passes can both name it.
import type { LocalRegistry } from '../common/image-reference.js';
import type { ExtraImagePath } from '../images/manifest-images.js';
import type { PinPlan } from './pin-fields.js';

export interface RewritePlan {
  /** Where images go; without it images are left alone (pull secrets may still be added). */
  registry?: LocalRegistry;
  extraPaths: ExtraImagePath[];
  /** Name of a docker-registry Secret to add to every pod spec's imagePullSecrets. */
  imagePullSecret?: string;
  /**
   * Fields of rendered objects set to their live values (pin-fields.ts): what something else owns
   * (drift ignore rules), so that helm's upgrade changes nothing there. A plan with pins and
   * neither a registry nor a pull secret only pins: images are not even looked for.
   */
  pins?: PinPlan;
  /**
   * The KOTS app slug, set as the `kots.io/app-slug` annotation of every object but CRDs
   * (annotate.ts), so that `kubectl kots remove --undeploy` removes them.
   */
  appSlug?: string;
}
