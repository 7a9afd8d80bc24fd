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

export interface CliOptions {
  /** Added to this process's environment; an undefined value removes the variable. */
  env?: Record<string, string | undefined>;
  /** Killed (SIGTERM) after this long; 0 for never, as a run a test kills itself. */
  timeoutMs?: number;
  /** Node flags before the CLI's path (a --import preload), after the image's own. */
  nodeArgs?: string[];
  /** Another Node binary (an older Node), run as a user types `node dist/bundle/cli.js`: no flags. */
  node?: string;
  /**
   * A process group of its own, so that a kill of the group takes its helm with it (spawnCli). Such
   * a run is one a test signals: no SIGKILL follows its SIGTERM by itself, as the clean stop the
   * test waits for may take longer than execa's default grace.
   */
  detached?: boolean;
  /** Run as this user (the image's non-root user when the tests run as root). */
  user?: { uid?: number; gid?: number };
}

/**
 * Starts the built CLI (npm test builds it first) the way a Job would: the image's Node flags,
 * argv, env; the termination log off unless env names one. Not awaited: for the tests that watch
 * or signal it while it runs.
 */
export function startCli(args: string[], options: CliOptions = {}) {
  const [node, ...flags] = options.node ? [options.node] : [process.execPath, ...installerNodeArgs];
  return execa(node!, [...flags, ...(options.nodeArgs ?? []), cliPath, ...args], {
    reject: false,
    env: { HELM_INSTALLER_TERMINATION_LOG: '/nonexistent/termination-log', ...options.env },
    timeout: options.timeoutMs ?? 300_000,
    ...(options.detached ? { detached: true, forceKillAfterDelay: false } : {}),
    ...options.user,
  } satisfies Options);
}

/** The built CLI run to its end (startCli): its exit code and output. */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return cliResult(await startCli(args, options));
}

/** A finished run as the tests read it (-1 for no exit code: killed by a signal). */
export function cliResult(r: { exitCode?: number; stdout: unknown; stderr: unknown }): CliResult {
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Runs a real helm binary; returns stdout or throws with stderr. */
export async function helm(bin: string, args: string[], env?: Record<string, string>): Promise<string> {
  const r = await execa(bin, args, { reject: false, env });
  if (r.exitCode !== 0) throw new Error(`helm ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
