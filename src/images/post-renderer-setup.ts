// Prepares our post-renderer for one helm run. Helm 3 takes an executable path; helm 4 takes the
// name of a `postrenderer/v1` plugin found under $HELM_PLUGINS (a directory with a plugin.yaml is
// enough, no `helm plugin install`). Both run the same sh shim, and this process does the rewrite
// (post-render-host.ts): no second Node process on any render.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExitCode, InstallerError } from '../errors.js';
import { startPostRenderHost } from './post-render-host.js';
import { readPostRenderReports, runPostRender, type PostRenderPlanFile, type PostRenderReport } from './post-render-run.js';
import type { RewritePlan } from './rewrite-manifests.js';

export const POST_RENDERER_PLUGIN = 'helm-installer-images';
// Helm 4 checks it is semver; it is ours, not the product's version.
const PLUGIN_VERSION = '1.0.0';

export interface PostRendererOptions {
  /** A private directory for this run (plan, report, plugin, shim and its requests). */
  workDir: string;
  plan: RewritePlan;
  helmMajor: 3 | 4;
}

export interface PostRendererSetup {
  /** Append to `helm upgrade|install|template`. */
  helmArgs: string[];
  /** Add to helm's environment. */
  env: Record<string, string>;
  planFile: string;
  reportFile: string;
  /** The sh script helm runs (helm 3: directly; helm 4: through the plugin). */
  shim: string;
  /** The reports the post-renderer appended so far (one per helm render). */
  readReport(): Promise<PostRenderReport[]>;
  /** Stops serving helm's post-renders (once no helm of this run renders any more). */
  dispose(): void;
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
  const host = await startPostRenderHost(options.workDir, (input, write) => runPostRender(planFile, input, write));
  const common = { planFile, reportFile, shim: host.shim, readReport: () => readPostRenderReports(reportFile), dispose: host.dispose };
  if (options.helmMajor === 3) return { helmArgs: ['--post-renderer', host.shim], env: {}, ...common };

  const pluginsDir = join(options.workDir, 'plugins');
  const pluginDir = join(pluginsDir, POST_RENDERER_PLUGIN);
  await mkdir(pluginDir, { recursive: true });
  await writeFile(join(pluginDir, 'plugin.yaml'), pluginYaml(host.shim), 'utf8');
  return { helmArgs: ['--post-renderer', POST_RENDERER_PLUGIN], env: { HELM_PLUGINS: pluginsDir }, ...common };
}

/**
 * Helm 4 splits `command` on spaces and expands `$VAR` in command and args (os.Expand), with no
 * escape for either; a path that would be mangled is refused rather than run as something else.
 * JSON is YAML: no YAML library is loaded for it.
 */
export function pluginYaml(shim: string): string {
  if (shim.includes('$')) {
    throw new InstallerError(ExitCode.internal, `Helm 4 would expand "$" in the post-renderer path ${shim}`, {
      hint: 'Set TMPDIR to a path without "$".',
    });
  }
  // Only fields helm 4's MetadataV1 knows: it decodes plugin.yaml strictly (KnownFields) and
  // skips a plugin it cannot load without saying why ("plugin not found").
  return `${JSON.stringify({
    apiVersion: 'v1',
    name: POST_RENDERER_PLUGIN,
    version: PLUGIN_VERSION,
    type: 'postrenderer/v1',
    runtime: 'subprocess',
    runtimeConfig: { platformCommand: [{ command: '/bin/sh', args: [shim] }] },
  })}\n`;
}
