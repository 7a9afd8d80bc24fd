// Finds the helm binary and its version, once per run. Order: --helm-bin / HELM_BIN, then the
// pinned helm that `npm install` extracts into node_modules (a dev checkout needs no PATH
// set-up), then `helm` on PATH (the container image puts it there).
// The version comes from a stamp file beside the binary when there is one (written where the
// binary is installed: test/tools/install-helm.mjs, the Dockerfile), so a run spawns no
// `helm version` (issue 10: no helm call the result does not need); otherwise helm is asked.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { HelmNotFoundError } from '../common/errors.js';
import { packageRoot } from '../common/package-root.js';
import { helmTraits, type HelmTraits } from './helm-traits.js';
import { runProcess } from './run-process.js';

export interface HelmBinary {
  path: string;
  version: string;
  major: 3 | 4;
  /** What this helm does differently (how it takes a post-renderer, waits, applies). */
  traits: HelmTraits;
}

function pinnedHelmPath(major: 3 | 4 = 4): string {
  return join(packageRoot(), 'node_modules', '.helm-installer', `helm${major}`);
}

function chooseHelmPath(explicit?: string): string {
  if (explicit) return explicit.includes('/') ? resolve(explicit) : explicit;
  const pinned = pinnedHelmPath(4);
  return existsSync(pinned) ? pinned : 'helm';
}

/** Parses `helm version --short` output such as `v4.1.4+g05fa379`. Pure. */
export function parseHelmVersion(text: string): { version: string; major: 3 | 4 } | undefined {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!m) return undefined;
  const major = Number(m[1]);
  if (major !== 3 && major !== 4) return undefined;
  return { version: `v${m[1]}.${m[2]}.${m[3]}`, major };
}

/** `<binary>.version`: `{"version": "v4.1.4+g05fa379", "size": <bytes of the binary>}`. */
export function versionStampPath(binary: string): string {
  return `${binary}.version`;
}

/**
 * The version a stamp beside the binary records, if the stamp is there, parses, and was written
 * for a binary of this size (a replaced binary, even without its stamp, is asked instead).
 */
export function readVersionStamp(binary: string): { version: string; major: 3 | 4 } | undefined {
  if (!binary.includes('/')) return undefined;
  try {
    const stamp = JSON.parse(readFileSync(versionStampPath(binary), 'utf8')) as { version?: unknown; size?: unknown };
    if (typeof stamp.version !== 'string' || stamp.size !== statSync(binary).size) return undefined;
    return parseHelmVersion(stamp.version);
  } catch {
    return undefined;
  }
}

export async function detectHelm(explicit?: string): Promise<HelmBinary> {
  const path = chooseHelmPath(explicit);
  const stamped = readVersionStamp(path);
  if (stamped) return { path, ...stamped, traits: helmTraits(stamped.major) };
  const result = await runProcess(path, ['version', '--short'], { env: { HELM_PLUGINS: '/nonexistent' } });
  if (result.spawnError) {
    throw new HelmNotFoundError(`helm not found: cannot run ${path} (${result.spawnError})`, {
      hint: 'Install helm 4 (or 3.17+) on PATH, or set --helm-bin / HELM_BIN to its path.',
    });
  }
  const parsed = parseHelmVersion(result.stdout);
  if (result.exitCode !== 0 || !parsed) {
    throw new HelmNotFoundError(
      `${path} is not a usable helm 3 or 4: ${(result.stderr || result.stdout).trim().slice(0, 200)}`,
      {
        hint: 'Point --helm-bin / HELM_BIN at a helm 4 (or 3.17+) binary.',
      },
    );
  }
  return { path, ...parsed, traits: helmTraits(parsed.major) };
}
