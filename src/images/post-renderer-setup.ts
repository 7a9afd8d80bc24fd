// Prepares our post-renderer for one helm run. Helm 3 takes an executable path; helm 4 takes the
// name of a `postrenderer/v1` plugin found under $HELM_PLUGINS (a directory with a plugin.yaml is
// enough, no `helm plugin install`). Both end up running `node post-render.js --plan <file>`.
import { access, chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { ExitCode, InstallerError } from '../errors.js';
import { readPostRenderReports, type PostRenderPlanFile, type PostRenderReport } from './post-render-run.js';
import type { RewritePlan } from './rewrite-manifests.js';

export const POST_RENDERER_PLUGIN = 'helm-installer-images';
// Helm 4 checks it is semver; it is ours, not the product's version.
const PLUGIN_VERSION = '1.0.0';

export interface PostRendererOptions {
  /** A private directory for this run (plan, report, plugin or wrapper script). */
  workDir: string;
  plan: RewritePlan;
  helmMajor: 3 | 4;
  /** Node binary that runs the post-renderer; defaults to the one running us. */
  nodePath?: string;
  /** The post-renderer script; defaults to the bundled dist/bundle/post-render.js. */
  scriptPath?: string;
}

export interface PostRendererSetup {
  /** Append to `helm upgrade|install|template`. */
  helmArgs: string[];
  /** Add to helm's environment. */
  env: Record<string, string>;
  planFile: string;
  reportFile: string;
  /** The reports the post-renderer appended so far (one per helm render). */
  readReport(): Promise<PostRenderReport[]>;
}

/**
 * Node flags of the post-renderer process. A young generation of 1 MB (Node's default grows to
 * 16 MB per semi-space) keeps each document's short-lived tree from being promoted and piling up
 * in the old generation: measured on 50 MB of manifests, peak RSS 340 MB -> 200 MB, same speed.
 * --expose-gc lets the post-renderer collect after every few MB of documents (post-render-run.ts).
 * No optimising compilers (Maglev, TurboFan): compiling the hot parser functions is a fixed cost
 * of every run, 8-23 MB of the peak, while the interpreter and baseline code (Sparkplug) still
 * rewrite several times faster than yq. Memory is what a Job's limit counts, and a rewrite is a
 * small part of an install's time. Medians of 3 runs (load 3), peak RSS and wall time, TurboFan
 * without inlining -> none: helm 4 output of 1 MB 69 -> 59 MB, 0.26 -> 0.29 s; of 10 MB 86 -> 68
 * MB, 0.78 -> 1.97 s (yq 5.6 s); public charts concatenated, 12 MB 89 -> 81 MB, 0.32 -> 0.40 s
 * (yq 1.9 s), 50 MB 130 -> 107 MB, 1.04 -> 1.63 s (yq 9.1 s).
 */
export const POST_RENDER_NODE_ARGS = ['--max-semi-space-size=1', '--expose-gc', '--no-maglev', '--no-opt'];

export function defaultPostRenderScript(): string {
  // dist/src/images/post-renderer-setup.js -> dist/bundle/post-render.js, the one-file build of
  // src/post-render.ts (test/tools/bundle-post-render.mjs): less to load in every render.
  return fileURLToPath(new URL('../../bundle/post-render.js', import.meta.url));
}

export async function preparePostRenderer(options: PostRendererOptions): Promise<PostRendererSetup> {
  const nodePath = options.nodePath ?? process.execPath;
  const scriptPath = options.scriptPath ?? defaultPostRenderScript();
  try {
    await access(scriptPath);
  } catch {
    throw new InstallerError(ExitCode.internal, `The post-renderer script ${scriptPath} does not exist`, {
      hint: 'Build the installer (npm run build) so that dist/bundle/post-render.js exists, or pass its path.',
    });
  }

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
  const readReport = () => readPostRenderReports(reportFile);

  if (options.helmMajor === 4) {
    const pluginsDir = join(options.workDir, 'plugins');
    const pluginDir = join(pluginsDir, POST_RENDERER_PLUGIN);
    await mkdir(pluginDir, { recursive: true });
    await writeFile(join(pluginDir, 'plugin.yaml'), pluginYaml(nodePath, scriptPath), 'utf8');
    return {
      // v4 appends each --post-renderer-args value to the plugin's argv, unexpanded.
      helmArgs: ['--post-renderer', POST_RENDERER_PLUGIN, `--post-renderer-args=--plan=${planFile}`],
      env: { HELM_PLUGINS: pluginsDir },
      planFile,
      reportFile,
      readReport,
    };
  }

  const wrapper = join(options.workDir, 'helm-installer-post-render.sh');
  const script = [
    '#!/bin/sh',
    '# Written by helm-installer: helm 3 runs this as its --post-renderer.',
    `exec ${shellQuote(nodePath)} ${POST_RENDER_NODE_ARGS.join(' ')} ${shellQuote(scriptPath)} --plan ${shellQuote(planFile)}`,
    '',
  ].join('\n');
  await writeFile(wrapper, script, 'utf8');
  await chmod(wrapper, 0o755);
  return { helmArgs: ['--post-renderer', wrapper], env: {}, planFile, reportFile, readReport };
}

/**
 * Helm 4 splits `command` on spaces and expands `$VAR` in command and args (os.Expand), with no
 * escape for either; a path that would be mangled is refused rather than run as something else.
 */
export function pluginYaml(nodePath: string, scriptPath: string): string {
  if (/[\s$]/.test(nodePath)) {
    throw new InstallerError(ExitCode.internal, `Helm 4 cannot run a plugin command with a space or "$" in its path: ${nodePath}`, {
      hint: 'Install node at a path without spaces or "$" (or pass nodePath).',
    });
  }
  if (scriptPath.includes('$')) {
    throw new InstallerError(ExitCode.internal, `Helm 4 would expand "$" in the post-renderer path ${scriptPath}`, {
      hint: 'Install the installer at a path without "$".',
    });
  }
  // Only fields helm 4's MetadataV1 knows: it decodes plugin.yaml strictly (KnownFields) and
  // skips a plugin it cannot load without saying why ("plugin not found").
  return stringify({
    apiVersion: 'v1',
    name: POST_RENDERER_PLUGIN,
    version: PLUGIN_VERSION,
    type: 'postrenderer/v1',
    runtime: 'subprocess',
    runtimeConfig: { platformCommand: [{ command: nodePath, args: [...POST_RENDER_NODE_ARGS, scriptPath] }] },
  });
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
