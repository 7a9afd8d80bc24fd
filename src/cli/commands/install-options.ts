// The install command's options: one table (flag, environment variable, parser, default) that
// the CLI registers and the resolver reads. The typed object install's run reads is
// reconcile/install-options.ts's InstallOptions; install-command.ts hands this table's result to
// it, so the compiler holds the two together.
import {
  commonOptionTable,
  oneOf,
  parseDurationMs,
  parseHistoryMax,
  parseNamespace,
  parseObjectName,
  parsePath,
  parseTakeOwnership,
  parseTimeout,
  parseUid,
} from '../../options/config.js';
import type { CrdPolicy } from '../../crds/crd-decision.js';
import type { OrphanedClaimsPolicy } from '../../reconcile/actions/check-claims.js';
import { parseDriftIgnore, parseDriftIgnoreFile, parseDriftMode } from '../../reconcile/drift-options.js';
import { parseCaFile, parsePullSecretFile } from '../../options/input-file-options.js';
import { parseBoolean, rest, switchOption, value } from '../../options/options.js';
import { OptionValueError } from '../../common/errors.js';
import type { AppRollback, RecreateImmutable, TestFailureAction } from '../../reconcile/install-options.js';
import {
  boundedDurationMs,
  hideUrl,
  parseNotifyFormat,
  parseNotifyRetries,
  parseNotifyUrl,
  parseNotifyUrlFile,
} from '../../options/notify-options.js';

function parseParallel(raw: string): number {
  const n = Number(raw.trim());
  if (!Number.isInteger(n) || n < 1 || n > 32) throw new OptionValueError('expected a whole number from 1 to 32');
  return n;
}

const parseTestFailure = oneOf<TestFailureAction>('rollback', 'keep');

const parseCrdPolicy = oneOf<CrdPolicy>('create-replace', 'create', 'skip');

const parseAppRollback = oneOf<AppRollback>('on-failure', 'never');

/** Claims holding data that no workload of the new version mounts: the upgrade refused (exit 3), or allowed and the claims left as they are. */
const parseOrphanedClaims = oneOf<OrphanedClaimsPolicy>('refuse', 'allow');

const parseRecreateImmutable = oneOf<RecreateImmutable>('auto', 'never');

export const installOptionTable = {
  ...commonOptionTable,
  timeout: value(
    '--timeout <duration>',
    'TIMEOUT',
    'how long helm waits for resources (Go duration)',
    parseTimeout,
    '10m',
  ),
  historyMax: value('--history-max <n>', 'HISTORY_MAX', 'revisions helm keeps (0 = all)', parseHistoryMax, 5),
  dryRun: switchOption('--dry-run', 'DRY_RUN', "helm's server-side dry run: nothing changes"),
  suspend: switchOption(
    '--suspend',
    'SUSPEND',
    'pause: change nothing, take no Lease, record a Suspended Event; exit 0 (a maintenance window)',
  ),
  planOnly: switchOption(
    '--plan-only',
    'PLAN_ONLY',
    'print the plan (what install would do, as `plan` does) and change nothing; exit 0',
  ),
  terminationLog: value(
    '--termination-log <path>',
    'TERMINATION_LOG',
    'where the failure summary is written',
    parsePath,
    '/dev/termination-log',
  ),
  takeOwnership: value(
    '--take-ownership <when>',
    'TAKE_OWNERSHIP',
    "adopt existing objects: first-install (a first install adopts objects no helm release owns; another release's is refused, exit 4), always (any, even another release's), never",
    parseTakeOwnership,
    'first-install',
  ),
  skipPreflight: switchOption(
    '--skip-preflight',
    'SKIP_PREFLIGHT',
    'skip the preflight checks: rewritten images in the registry, RBAC',
  ),
  registryCaFile: value(
    '--registry-ca-file <file>',
    'REGISTRY_CA_FILE',
    'CA bundle for an HTTPS registry with a private CA',
    parseCaFile,
  ),
  pullSecretFile: value(
    '--pull-secret-file <file>',
    'PULL_SECRET_FILE',
    'a .dockerconfigjson file with the registry credentials for the preflight',
    parsePullSecretFile,
  ),
  lockTimeout: value(
    '--lock-timeout <duration>',
    'LOCK_TIMEOUT',
    'how long to wait while another installer holds the release (its Lease), then exit 7',
    parseDurationMs,
    300_000,
    '5m',
  ),
  connectTimeout: value(
    '--connect-timeout <duration>',
    'CONNECT_TIMEOUT',
    'how long to retry an API server that is not reachable yet, then exit 5',
    parseDurationMs,
    60_000,
    '60s',
  ),
  forceUpgrade: switchOption(
    '--force-upgrade',
    'FORCE_UPGRADE',
    'upgrade even when chart and values equal the deployed revision',
  ),
  drift: value(
    '--drift <mode>',
    'DRIFT',
    "objects of the release changed or deleted by hand: correct (put them back), warn (name them, change nothing), off (don't look)",
    parseDriftMode,
    'correct',
  ),
  driftIgnore: value(
    '--drift-ignore <rules>',
    'DRIFT_IGNORE',
    'fields that something else owns, never drift and never taken back: JSON pointers, optionally Kind/name: first (see src/reconcile/README.md)',
    parseDriftIgnore,
    [],
    'none',
  ),
  driftIgnoreFile: value(
    '--drift-ignore-file <file>',
    'DRIFT_IGNORE_FILE',
    'the same rules as a YAML list of {paths, target} (see src/reconcile/README.md)',
    parseDriftIgnoreFile,
    [],
    'none',
  ),
  crds: value(
    '--crds <policy>',
    'CRDS',
    "the chart's crds/ CRDs before each upgrade: create-replace (create or update them; never delete), create (only missing ones), skip (helm's own: installed once, never updated)",
    parseCrdPolicy,
    'create-replace' as CrdPolicy,
  ),
  recreateImmutable: value(
    '--recreate-immutable <when>',
    'RECREATE_IMMUTABLE',
    'objects whose change the API server refuses (a StatefulSet serviceName, a selector): auto recreates them keeping pods data (PVCs stay), never lets the upgrade fail',
    parseRecreateImmutable,
    'auto' as RecreateImmutable,
  ),
  orphanedClaims: value(
    '--orphaned-claims <policy>',
    'ORPHANED_CLAIMS',
    'claims holding data that no workload of the new chart version mounts (a StatefulSet deleted or renamed): refuse stops the upgrade before any change (exit 3), allow upgrades and leaves them as they are',
    parseOrphanedClaims,
    'refuse' as OrphanedClaimsPolicy,
  ),
  progressInterval: value(
    '--progress-interval <duration>',
    'PROGRESS_INTERVAL',
    'while helm waits, how often to log what is not ready and why',
    parseDurationMs,
    30_000,
    '30s',
  ),
  failFastAfter: value(
    '--fail-fast-after <duration>',
    'FAIL_FAST_AFTER',
    'stop (helm rolls back) when a pod stays in ErrImagePull/ImagePullBackOff/CrashLoopBackOff/Unschedulable, or the cluster refuses its pods (FailedCreate), this long; 0 = wait the whole timeout',
    parseDurationMs,
    90_000,
    '90s',
  ),
  // The URL is a secret: never echoed, in errors either (see src/options/notify-options.ts).
  notifyUrl: {
    ...value(
      '--notify-url <url>',
      'NOTIFY_URL',
      'a webhook POSTed one JSON body per outcome once the run has ended (the URL is a secret: never logged)',
      parseNotifyUrl,
    ),
    echo: hideUrl,
  },
  notifyUrlFile: value(
    '--notify-url-file <file>',
    'NOTIFY_URL_FILE',
    'a file holding the webhook URL (a mounted Secret key); empty = no webhook',
    parseNotifyUrlFile,
  ),
  notifyFormat: value(
    '--notify-format <format>',
    'NOTIFY_FORMAT',
    'the webhook body: json (every fact, keyed) or slack ({"text": ...}, an incoming webhook)',
    parseNotifyFormat,
    'json',
  ),
  notifyTimeout: value(
    '--notify-timeout <duration>',
    'NOTIFY_TIMEOUT',
    'how long one webhook POST may take (at most 1m)',
    boundedDurationMs(60_000, '1m'),
    5_000,
    '5s',
  ),
  notifyRetries: value(
    '--notify-retries <n>',
    'NOTIFY_RETRIES',
    'webhook POSTs retried after a timeout, a connection error or a 5xx/408/429 (0-5, with backoff)',
    parseNotifyRetries,
    2,
  ),
  notifyMaxTime: value(
    '--notify-max-time <duration>',
    'NOTIFY_MAX_TIME',
    'the most the webhook adds to the run, all POSTs together (at most 5m)',
    boundedDurationMs(300_000, '5m'),
    30_000,
    '30s',
  ),
  test: switchOption(
    '--test',
    'TEST',
    "run the chart's test hooks (helm test) once an install or upgrade is ready; a failure is exit 4",
  ),
  testTimeout: value(
    '--test-timeout <duration>',
    'TEST_TIMEOUT',
    'how long the tests may take (Go duration); longer counts as failed',
    parseTimeout,
    '5m',
  ),
  testFailure: value(
    '--test-failure <action>',
    'TEST_FAILURE',
    'when a test fails: rollback (to the previous revision; a first install is uninstalled) or keep (the release stays as upgraded); exit 4 either way',
    parseTestFailure,
    'rollback' as TestFailureAction,
  ),
  maxParallel: value(
    '--max-parallel <n>',
    'MAX_PARALLEL',
    'with a release plan: releases checked or installed at the same time',
    parseParallel,
    4,
  ),
  appRollback: value(
    '--app-rollback <when>',
    'APP_ROLLBACK',
    'with a release plan: when a release fails, every release this run changed goes back to the last good app revision (on-failure), or stays as it is (never)',
    parseAppRollback,
    'on-failure' as AppRollback,
  ),
  pruneReleases: value(
    '--prune-releases <bool>',
    'PRUNE_RELEASES',
    "with a release plan: uninstall this app's releases that the plan dropped or switched off",
    parseBoolean,
    true,
  ),
  // The Job this runs in, from the pod's own labels (downward API): the Events of the run go on it
  // (src/tell/events.ts). Unset outside a Job: each release's Events go on its namespace.
  jobName: value(
    '--job-name <name>',
    'JOB_NAME',
    "the Job this runs in: its Events go on it (in a Job: the pod's batch.kubernetes.io/job-name label)",
    parseObjectName,
  ),
  jobUid: value(
    '--job-uid <uid>',
    'JOB_UID',
    "that Job's uid, so `kubectl describe job` lists its Events (the pod's batch.kubernetes.io/controller-uid label)",
    parseUid,
  ),
  jobNamespace: value(
    '--job-namespace <ns>',
    'JOB_NAMESPACE',
    "that Job's namespace (default: the pod's own, POD_NAMESPACE)",
    parseNamespace,
  ),
  helmArgs: rest('HELM_ARGS', 'after --: passed to helm verbatim'),
};
