// What install's run reads: the options of one release's install (src/reconcile, src/releases). The
// table that parses them (flags, environment variables, defaults, help) lives with the command,
// src/cli/commands/install-options.ts; the command hands its result here, so the compiler holds
// the two together. Each option's meaning: that table, and docs/options.md.
import type { CrdPolicy } from '../crds/crd-decision.js';
import type { IgnoreRule } from '../drift/ignore-rules.js';
import type { CommonOptions, TakeOwnership } from '../options/config.js';
import type { NotifyFormat } from '../options/notify-options.js';
import type { OrphanedClaimsPolicy } from './actions/check-claims.js';
import type { DriftMode } from './decide.js';

/** What a failed `--test` does to the release (Flux's `spec.test` remediates unless `ignoreFailures`). */
export type TestFailureAction = 'rollback' | 'keep';

/** A release plan's run that fails: every release it changed goes back to the last good app revision, or not. */
export type AppRollback = 'on-failure' | 'never';

/** Objects whose change the API server refuses as immutable: recreated (auto) or left to fail (never). */
export type RecreateImmutable = 'auto' | 'never';

export interface InstallOptions extends CommonOptions {
  // helm upgrade's own
  timeout: string;
  historyMax: number;
  dryRun: boolean;
  helmArgs: string[];
  // the pause and the preview (releases/pause-preview.ts)
  suspend: boolean;
  planOnly: boolean;
  // the checks and the Lease
  takeOwnership: TakeOwnership;
  skipPreflight: boolean;
  registryCaFile: string | undefined;
  pullSecretFile: string | undefined;
  /** Milliseconds. */
  lockTimeout: number;
  /** Milliseconds. */
  connectTimeout: number;
  forceUpgrade: boolean;
  // drift, CRDs, immutable fields, orphaned claims
  drift: DriftMode;
  driftIgnore: IgnoreRule[];
  driftIgnoreFile: IgnoreRule[];
  crds: CrdPolicy;
  recreateImmutable: RecreateImmutable;
  orphanedClaims: OrphanedClaimsPolicy;
  /** Milliseconds. */
  progressInterval: number;
  /** Milliseconds. */
  failFastAfter: number;
  // what the run tells: the termination message, the webhook, the Job's Events
  terminationLog: string;
  notifyUrl: string | undefined;
  notifyUrlFile: string | undefined;
  notifyFormat: NotifyFormat;
  notifyTimeout: number;
  notifyRetries: number;
  notifyMaxTime: number;
  jobName: string | undefined;
  jobUid: string | undefined;
  jobNamespace: string | undefined;
  // helm test
  test: boolean;
  testTimeout: string;
  testFailure: TestFailureAction;
  // a release plan's
  maxParallel: number;
  appRollback: AppRollback;
  pruneReleases: boolean;
}
