// What the one process-ending place (main.ts) needs to know about a command in flight: where
// it got to (for the failure summary), which secrets to mask, and how to cancel it.
import type { Logger } from 'pino';
import type { KubeClients } from '../cluster/kube-client.js';
import type { SecretRegistry } from '../common/secrets.js';
import type { Outcome } from './outcome.js';

export interface Progress {
  release?: string;
  namespace?: string;
  action: string;
  /** The chart's version, once read: a failure's outcome names it. */
  chartVersion?: string;
}

export interface RunState {
  signal: AbortSignal;
  secrets: SecretRegistry;
  progress: Progress;
  /** Set by a command once it has a logger, so the failure is logged there too. */
  logger?: Logger;
  /** Set by `install`: where the kubelet reads the termination message. */
  terminationLog?: string;
  /** Found while reading options (unknown HELM_INSTALLER_* variables), logged once a logger exists. */
  warnings?: string[];
  /** Fields on every log line (a release of a plan: its `namespace/name`). */
  bindings?: Record<string, string>;
  /** What happened to each release (src/run/record.ts); shared by a plan's releases. */
  outcomes?: Outcome[];
  /** The run's cluster connection, once made: the Events after the run reuse it (no second TLS handshake). */
  kube?: KubeClients;
  /** Set by `install`: writes the outcomes (Events, notifications) once the command has ended; never throws. */
  tell?: (outcomes: Outcome[]) => Promise<void>;
}
