// Troubleshoot's own CLIs, `preflight` and `support-bundle`, for the proof that the specs
// `troubleshoot-specs` writes run as KOTS runs them. ensureTroubleshootBinaries() builds them
// (build-binaries.sh troubleshoot, cached by version) when missing; runPreflight/runSupportBundle
// run them against the local cluster without updating themselves.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { acquireLock } from './lock.js';
import { buildScriptPath, cacheRoot, pinnedTroubleshootVersion } from './paths.js';

export interface TroubleshootPaths {
  preflight: string;
  supportBundle: string;
}

function troubleshootPaths(version = pinnedTroubleshootVersion()): TroubleshootPaths {
  const bin = join(cacheRoot(), 'bin');
  return { preflight: join(bin, `preflight-${version}`), supportBundle: join(bin, `support-bundle-${version}`) };
}

const quiet = () => {};
/** Longer than a cold build on a busy 2-core machine (about 25 minutes measured). */
const BUILD_LOCK_WAIT_MS = 60 * 60_000;

/** Builds what is missing, under a lock so two test runs never build it at once. */
export async function ensureTroubleshootBinaries(log: (line: string) => void = quiet): Promise<TroubleshootPaths> {
  const paths = troubleshootPaths();
  const present = () => existsSync(paths.preflight) && existsSync(paths.supportBundle);
  if (present()) return paths;
  const release = await acquireLock('troubleshoot-build', log, BUILD_LOCK_WAIT_MS);
  try {
    if (present()) return paths;
    log(
      'preflight or support-bundle missing: running build-binaries.sh troubleshoot (slow the first time: 244 modules fetched and compiled)',
    );
    const began = Date.now();
    const build = execa('bash', [buildScriptPath(), 'troubleshoot'], {
      env: { HELM_INSTALLER_CACHE: cacheRoot() },
      all: true,
      buffer: false,
      reject: false,
    });
    for await (const line of build.iterable({ from: 'all' }))
      if (!String(line).startsWith('go: downloading')) log(String(line));
    const result = await build;
    if (result.exitCode !== 0)
      throw new Error(`build-binaries.sh troubleshoot failed (exit ${result.exitCode}); its output is above`);
    if (!present())
      throw new Error(`build-binaries.sh troubleshoot finished but a binary is missing in ${cacheRoot()}/bin`);
    log(`Troubleshoot built in ${Math.round((Date.now() - began) / 1000)} s`);
    return paths;
  } finally {
    release();
  }
}

/** Never ask, never update itself: what a CI run needs. */
const QUIET_FLAGS = ['--interactive=false', '--auto-update=false'];

export interface PreflightResult {
  exitCode: number;
  /** Each analyzer's outcome, as `--format json` prints them. */
  results: { strict?: boolean; title: string; message: string; outcome: 'pass' | 'warn' | 'fail' }[];
  stderr: string;
}

/** `preflight --format json`: exit 0 all pass, 3 a failure, 4 warnings only. */
export async function runPreflight(binary: string, specFile: string, kubeconfig: string): Promise<PreflightResult> {
  // preflight leaves a preflightbundle-<time>.tar.gz in its working directory: the spec's folder, a temporary one.
  const r = await execa(binary, [...QUIET_FLAGS, '--format', 'json', specFile], {
    env: { KUBECONFIG: kubeconfig },
    reject: false,
    cwd: dirname(specFile),
  });
  const parsed = JSON.parse(r.stdout || '{}') as Record<
    'pass' | 'warn' | 'fail',
    { title: string; message: string; strict?: boolean }[] | undefined
  >;
  const results = (['pass', 'warn', 'fail'] as const).flatMap((outcome) =>
    (parsed[outcome] ?? []).map((x) => ({ ...x, outcome })),
  );
  return { exitCode: r.exitCode ?? 1, results, stderr: r.stderr };
}

export interface SupportBundleResult {
  exitCode: number;
  /** Each analyzer's result: its title, message and severity (`error` a failure, `warn`, `debug` a pass). */
  results: { title: string; message: string; severity: string }[];
  /** The .tar.gz written. */
  archive: string;
  stderr: string;
}

/** `support-bundle` into `outDir`: collected, redacted, analyzed; its analysis is JSON on stdout. */
export async function runSupportBundle(
  binary: string,
  specFile: string,
  kubeconfig: string,
  outDir: string,
): Promise<SupportBundleResult> {
  const r = await execa(binary, [...QUIET_FLAGS, '--output', join(outDir, 'bundle'), specFile], {
    env: { KUBECONFIG: kubeconfig },
    reject: false,
    cwd: outDir,
  });
  const start = r.stdout.indexOf('{');
  const parsed = JSON.parse(start >= 0 ? r.stdout.slice(start) : '{}') as {
    analyzerResults?: { insight?: { primary?: string; detail?: string }; severity?: string }[];
    archivePath?: string;
  };
  const results = (parsed.analyzerResults ?? []).map((x) => ({
    title: x.insight?.primary ?? '',
    message: x.insight?.detail ?? '',
    severity: x.severity ?? '',
  }));
  return { exitCode: r.exitCode ?? 1, results, archive: parsed.archivePath ?? '', stderr: r.stderr };
}
