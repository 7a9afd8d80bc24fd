// Pure classification of a failed helm call into a typed error. Helm exits 1 for every failure,
// so the cause is read from its words; the tests pin each pattern against real helm output.
import { ExitCode } from '../common/exit-codes.js';
import {
  HelmNotFoundError,
  HelmOperationError,
  type InstallerError,
  InvalidInputError,
  PreflightError,
  ReleaseBusyError,
  TransientError,
  UsageError,
} from '../common/errors.js';
import { type KnownFailure, knownFailure } from './known-failures.js';

export interface FailureContext {
  release: string;
  /** What we asked helm to do, for messages ("install/upgrade", "render", "read values"). */
  action: string;
  exitCode: number;
  stderr: string;
  canceled?: boolean;
  spawnError?: string;
  /** The signal that ended helm, when it did not exit on its own. */
  killedBy?: NodeJS.Signals;
}

/**
 * The lines worth showing: helm's last `Error:` line, the lines that continue it (schema
 * violations, hook errors), and the resources it named as not ready before it.
 */
export function extractCause(stderr: string): { cause: string; details: string[] } {
  const lines = stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim());
  const at = lines.findLastIndex((l) => l.startsWith('Error:'));
  const cause = (at >= 0 ? lines[at]! : (lines.at(-1) ?? 'helm failed without a message'))
    .replace(/^Error:\s*/, '')
    .trim();
  const continuation = at >= 0 ? lines.slice(at + 1).map((l) => l.trim()) : [];
  const before = (at >= 0 ? lines.slice(0, at) : lines.slice(0, -1))
    .map((l) => l.trim())
    .filter((l) =>
      /(not ready|InProgress|BackoffLimitExceeded|DeadlineExceeded|Unschedulable|ImagePull|CrashLoop|timed out|context deadline)/.test(
        l,
      ),
    );
  return { cause, details: unique([...before, ...continuation]).slice(0, 30) };
}

/** Resources helm names in its failure text: `Deployment/ns/name`, `job ns/name`, `jobs.batch "x"`. */
export function namedResources(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z][A-Za-z]+)\/([a-z0-9.-]+)\/([a-z0-9.-]+)/g)) found.add(`${m[1]}/${m[3]}`);
  for (const m of text.matchAll(
    /\b(jobs?|deployments?|statefulsets?|daemonsets?|pods?)(?:\.[a-z.]+)? "?([a-z0-9.-]+)"?/gi,
  )) {
    found.add(`${m[1]!.replace(/s$/, '').toLowerCase()}/${m[2]}`);
  }
  return [...found];
}

export function classifyHelmFailure(ctx: FailureContext): InstallerError {
  return processFailure(ctx) ?? fromHelmWords(ctx);
}

/** Helm never ran to its own end (stopped by us, killed, or not started): its words say nothing. */
function processFailure(ctx: FailureContext): InstallerError | undefined {
  const { release, action } = ctx;
  if (ctx.canceled) {
    return new TransientError(
      `${action} of release ${release} was interrupted (SIGTERM/SIGINT); helm was stopped cleanly`,
      {
        hint: 'Run the installer again; an interrupted upgrade is marked failed or rolled back by helm, and a release left pending is recovered by the next run.',
      },
    );
  }
  if (ctx.killedBy) {
    // Not by us (that is `canceled`): in a pod, the kernel's OOM killer at the container's memory
    // limit (it picks the largest process, helm), or a kill from outside. A retry may well work,
    // so this is exit 5, which the Job retries, not 4, which fails it for good.
    return new TransientError(
      `${action} of release ${release} stopped: helm was killed by ${ctx.killedBy}${ctx.killedBy === 'SIGKILL' ? ' (in a pod, usually the out-of-memory killer at the container memory limit)' : ''}`,
      {
        hint: "Run the installer again (the Job retries it); a release left pending is recovered by the next run. If it happens again, raise the Job's memory limit (resources.limits.memory).",
      },
    );
  }
  if (ctx.spawnError) {
    return new HelmNotFoundError(`could not start helm: ${ctx.spawnError}`, {
      hint: 'Install helm on PATH or set --helm-bin / HELM_BIN.',
    });
  }
  return undefined;
}

/** Helm exited 1: the cause from its words, the first pattern that matches in this order. */
function fromHelmWords(ctx: FailureContext): InstallerError {
  const { release, action, stderr } = ctx;
  const { cause, details } = extractCause(stderr);
  const message = [`${action} of release ${release} failed: ${cause}`, ...details.map((d) => `  ${d}`)].join('\n');
  const has = (re: RegExp) => re.test(stderr);

  if (has(/another operation \(install\/upgrade\/rollback\) is in progress/)) {
    return new ReleaseBusyError(`release ${release} is busy: another install, upgrade or rollback is in progress`, {
      hint: 'Wait for the other operation to finish (or for its pod to end), then run the installer again.',
    });
  }
  if (
    has(
      /failed parsing --set|failed parsing --set-string|failed parsing --set-json|key ".*" has no value|unknown flag|unknown shorthand flag|invalid argument ".*" for/,
    )
  ) {
    return new UsageError(message, { hint: 'Fix the option named above (helm syntax: --set a.b=c, lists as a[0]=x).' });
  }
  if (
    has(
      /[Kk]ubernetes cluster unreachable|connection refused|no such host|i\/o timeout|TLS handshake timeout|the server is currently unable to handle the request|dial tcp/,
    )
  ) {
    return new TransientError(message, {
      hint: 'Check the API server address and the network; the installer can simply be run again.',
    });
  }
  // RBAC only: an immutable field's refusal ("spec: Forbidden: updates to statefulset spec ...
  // are forbidden") is helm's failure, not a permission to grant.
  if (has(/is forbidden: User|forbidden: User "|cannot \w+ resource "/)) {
    return new PreflightError(message, {
      hint: 'Grant the installer\'s ServiceAccount the permissions named above (the Role and ClusterRole in manifests/installer.yaml, or kots/installer-job.yaml; README, "RBAC").',
    });
  }
  if (has(/chart requires kubeVersion/)) {
    // Without --kube-version, helm template assumes its own built-in version (helm 3.17: 1.32,
    // helm 4.1: 1.35), not the cluster's; install renders with the cluster's own.
    return new InvalidInputError(message, {
      hint: "The chart does not support that Kubernetes version. For render and images, give the target cluster's version: `-- --kube-version 1.34` (HELM_INSTALLER_HELM_ARGS); for install it is the cluster's own: use a chart version made for it.",
    });
  }
  const known = knownFailure(stderr);
  if (known) return knownFailureError(known, message, stderr);
  if (
    has(
      /values don't meet the specifications of the schema|execution error at|parse error at|error converting YAML to JSON|YAML parse error|unable to build kubernetes objects|error validating data|chart requires kubeVersion|template: /,
    )
  ) {
    return new InvalidInputError(message, {
      hint: 'Fix the values named above (checked against the chart schema and templates); `helm-installer values --explain` shows which file or --set gave each key.',
    });
  }
  return unclassifiedFailure(message, stderr);
}

/** No pattern matched: helm's own failure, with where it left the release and where to look. */
function unclassifiedFailure(message: string, stderr: string): InstallerError {
  const timedOut = /context deadline exceeded|timed out|timeout/.test(stderr);
  const state = releaseState(stderr);
  const resources = namedResources(stderr);
  const what = timedOut
    ? `Look at the resources named above (kubectl describe ${resources[0] ?? '<resource>'}), fix the cause, then run again.`
    : `Fix the cause above, then run again.`;
  return new HelmOperationError(`${message}\n${state}`, { hint: what });
}

/** A failure every run repeats: what it means, what state the release is in, and the way out. */
function knownFailureError(known: KnownFailure, message: string, stderr: string): InstallerError {
  const text = `${message}\n${known.meaning}\n${releaseState(stderr, true)}`;
  return known.exitCode === ExitCode.invalidInput
    ? new InvalidInputError(text, { hint: known.hint })
    : new HelmOperationError(text, { hint: known.hint });
}

/** Where helm left the release, from its words. */
function releaseState(stderr: string, repeats = false): string {
  if (/uninstalled due to|has been uninstalled/.test(stderr))
    return 'The failed first install was removed; nothing is left behind.';
  if (/has been rolled back|rolled back due to|rollback-on-failure|atomic/.test(stderr)) {
    return `The release was rolled back to its previous revision${repeats ? '; every run fails the same way until this is fixed' : ''}.`;
  }
  return repeats
    ? 'Every run fails the same way until this is fixed.'
    : 'The release is marked failed; the next run upgrades it again.';
}

function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
