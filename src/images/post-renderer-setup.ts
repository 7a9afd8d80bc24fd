// Prepares a post-renderer served by this process for one helm run. Helm 3 takes an executable
// path; helm 4 takes the name of a `postrenderer/v1` plugin found under $HELM_PLUGINS (a
// directory with a plugin.yaml is enough, no `helm plugin install`). Both run the same sh shim,
// and this process does the work (post-render-host.ts): no second Node process on any render.
// Two serve helm's slot: the image rewrite (--registry) and install's checks on helm's own render.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostPostRenderer, type HostedPostRenderer } from './post-render-host.js';
import { readPostRenderReports, runPostRender, type PostRenderPlanFile, type PostRenderReport } from './post-render-run.js';
import type { RewritePlan } from './rewrite-manifests.js';

export const POST_RENDERER_PLUGIN = 'helm-installer-images';

export interface PostRendererOptions {
  /** A private directory for this run (plan, report, plugin, shim and its requests). */
  workDir: string;
  plan: RewritePlan;
  helmMajor: 3 | 4;
}

export interface PostRendererSetup extends HostedPostRenderer {
  planFile: string;
  reportFile: string;
  /** The reports the post-renderer appended so far (one per helm render). */
  readReport(): Promise<PostRenderReport[]>;
}

export async function preparePostRenderer(options: PostRendererOptions): Promise<PostRendererSetup> {
  const planFile = join(options.workDir, 'post-render-plan.json');
  const reportFile = join(options.workDir, 'post-render-report.jsonl');
  const planData: PostRenderPlanFile = {
    version: 1,
    ...(options.plan.registry ? { registry: options.plan.registry.address } : {}),
    extraPaths: options.plan.extraPaths,
    ...(options.plan.imagePullSecret !== undefined ? { imagePullSecret: options.plan.imagePullSecret } : {}),
    reportFile,
  };
  await mkdir(options.workDir, { recursive: true });
  await writeFile(planFile, `${JSON.stringify(planData, null, 2)}\n`, 'utf8');
  const hosted = await hostPostRenderer({ workDir: options.workDir, helmMajor: options.helmMajor, plugin: POST_RENDERER_PLUGIN }, (input, write) =>
    runPostRender(planFile, input, write),
  );
  return { ...hosted, planFile, reportFile, readReport: () => readPostRenderReports(reportFile) };
}
