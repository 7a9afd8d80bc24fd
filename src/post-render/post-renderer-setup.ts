// Prepares a post-renderer served by this process for one helm run. Helm 3 takes an executable
// path; helm 4 takes the name of a `postrenderer/v1` plugin found under $HELM_PLUGINS (a
// directory with a plugin.yaml is enough, no `helm plugin install`). Both run the same sh shim,
// and this process does the work (post-render-host.ts): no second Node process on any render.
// Two serve helm's slot: the image rewrite (--registry) and install's checks on helm's own render.
// The plan comes in as the object the run built, and each render's report stays here in memory:
// the rewrite runs in this process, so nothing of either needs a file.
import type { InstallerError } from '../common/errors.js';
import type { HelmTraits } from '../helm/helm-traits.js';
import { hostPostRenderer, type HostedPostRenderer } from './post-render-host.js';
import { postRenderFailure, runPostRender, type PostRenderReport } from './post-render-run.js';
import type { RewritePlan } from './rewrite-plan.js';

export const POST_RENDERER_PLUGIN = 'helm-installer-images';

export interface PostRendererOptions {
  /** A private directory for this run (plugin, shim, its request FIFO, the rewrite's spill files). */
  workDir: string;
  plan: RewritePlan;
  /** The helm that will run it: how it takes a post-renderer. */
  helm: HelmTraits;
}

export interface PostRendererSetup extends HostedPostRenderer {
  /** What each post-render of this run reported so far, in order (one per helm render). */
  reports: readonly PostRenderReport[];
  /** The last failure the post-renderer reported, as the error the installer shows; none: undefined. */
  failure(): InstallerError | undefined;
}

export async function preparePostRenderer(options: PostRendererOptions): Promise<PostRendererSetup> {
  const reports: PostRenderReport[] = [];
  const hosted = await hostPostRenderer(
    { workDir: options.workDir, helm: options.helm, plugin: POST_RENDERER_PLUGIN },
    async (input, write) => {
      const outcome = await runPostRender(options.plan, options.workDir, input, write);
      reports.push(outcome.report);
      return outcome;
    },
  );
  const { plan } = options;
  const rewritesImages =
    plan.registry !== undefined || plan.imagePullSecret !== undefined || plan.extraPaths.length > 0;
  const purpose = rewritesImages ? 'images' : plan.pins ? 'pins' : 'annotate';
  return { ...hosted, reports, failure: () => postRenderFailure(reports, purpose) };
}
