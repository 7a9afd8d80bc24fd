// Shared by the tests that run real binaries: the repo's paths, the pinned helm, and the built CLI.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type Options } from 'execa';
import { packageRoot } from '../src/common/package-root.js';

// The package root whether this runs from test/ (vitest) or dist/test/ (bench scripts).
export const repoRoot = packageRoot();
/** The bundle `npm run build` makes (test/tools/bundle-cli.mjs): what the bin and the image run. */
export const cliPath = join(repoRoot, 'dist', 'bundle', 'cli.js');
/**
 * The Node flags the installer runs with, as the image's ENTRYPOINT and the bin's shebang give
 * them (test/unit/dockerfile.test.ts checks all three agree): a young generation of 1 MB, so the
 * post-render rewrite it hosts (src/post-render/post-render-host.ts) adds little more than its input.
 */
export const installerNodeArgs = ['--max-semi-space-size=1'];
export const helm4 = join(repoRoot, 'node_modules', '.helm-installer', 'helm4');
export const helm3 = join(repoRoot, 'node_modules', '.helm-installer', 'helm3');
export const kubectlBin = join(repoRoot, 'node_modules', '.helm-installer', 'kubectl');
export const appDir = join(repoRoot, 'app');
export const chartDir = join(appDir, 'storefront');

export function tempDir(prefix = 'hi-test'): string {
  return mkdtempSync(join(tmpdir(), `${prefix}-`));
}

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Spawns the built CLI (npm test builds it first) the way a Job would: argv plus env. */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const r = await execa(process.execPath, [...installerNodeArgs, cliPath, ...args], {
    reject: false,
    env: { HELM_INSTALLER_TERMINATION_LOG: '/nonexistent/termination-log', ...options.env },
    timeout: options.timeoutMs ?? 300_000,
  } satisfies Options);
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Runs a real helm binary; returns stdout or throws with stderr. */
export async function helm(bin: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await execa(bin, args, { reject: false, env });
  if (r.exitCode !== 0) throw new Error(`helm ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
