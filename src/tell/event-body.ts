// An outcome as the Kubernetes Event an admin reads (events.k8s.io/v1): where it goes (the Job
// the installer runs in, else the release's namespace), what it says, and in words why one could
// not be written. Pure; src/tell/events.ts writes them.
import { apiMessage, apiStatus, networkCode } from '../cluster/kube-errors.js';
import type { Outcome, OutcomeReason } from '../run/outcome.js';
import type { EventPlace, ObjectReference } from '../run/event-place.js';

// Where an Event goes is the run's to know (the RBAC preflight asks for `create events` there).

/** Who reports (a qualified name, as the API requires): `kubectl get events -o wide` shows it. */
export const REPORTING_CONTROLLER = 'helm-installer.io/installer';
/** events.k8s.io/v1 refuses a note over 1 kB (the API server counts bytes). */
export const NOTE_LIMIT_BYTES = 1024;
/** ...and a reportingInstance over 128 characters. */
const INSTANCE_LIMIT = 128;
/** On every Event, so that `kubectl get events -l helm-installer.io/release=shop` finds a release's. */
const RELEASE_LABEL = 'helm-installer.io/release';
const RELEASE_NAMESPACE_LABEL = 'helm-installer.io/release-namespace';

/** An events.k8s.io/v1 Event, as the API takes it. */
export interface EventBody {
  apiVersion: 'events.k8s.io/v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  /** RFC 3339 with microseconds (the API's MicroTime). */
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: OutcomeReason;
  type: Outcome['type'];
  note: string;
  regarding: ObjectReference;
}

/** What the installer did (or tried) that the reason reports: machine-readable, as the API asks. */
const ACTION: Record<OutcomeReason, string> = {
  Installed: 'Install',
  Upgraded: 'Upgrade',
  Unchanged: 'Check',
  DriftCorrected: 'CorrectDrift',
  DriftFound: 'CheckDrift',
  Recovered: 'Recover',
  Failed: 'Install',
  TestFailed: 'Test',
  Suspended: 'Suspend',
  RolledBack: 'Rollback',
};

export const eventAction = (reason: OutcomeReason): string => ACTION[reason];

export interface BodyOptions {
  now: Date;
  /** The pod (POD_NAME) or host the installer runs on. */
  instance: string;
  /** Makes the name unique: a few random hex digits. */
  suffix: string;
  /** The run's secret masking, applied once more to the note (outcomes are kept masked already). */
  mask?: (text: string) => string;
  /**
   * The outcome's place in the run's list, as microseconds on eventTime: Events written in the
   * same millisecond still sort in the order things happened (a recovery before its upgrade).
   */
  sequence?: number;
}

/** The Event for one outcome; its note names the release (a Job's plan installs several). */
export function eventBody(outcome: Outcome, place: EventPlace, o: BodyOptions): EventBody {
  const note = `release ${outcome.namespace}/${outcome.release}: ${outcome.note}`.replace(/\s*\n\s*/g, ' ');
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: eventName(place.regarding.name, o.now, o.suffix),
      namespace: place.namespace,
      labels: { [RELEASE_LABEL]: outcome.release, [RELEASE_NAMESPACE_LABEL]: outcome.namespace },
    },
    eventTime: microTime(o.now, o.sequence),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: cutBytes(o.instance, INSTANCE_LIMIT) || 'helm-installer',
    action: eventAction(outcome.reason),
    reason: outcome.reason,
    type: outcome.type,
    note: cutBytes((o.mask ?? ((t) => t))(note), NOTE_LIMIT_BYTES),
    regarding: place.regarding,
  };
}

/** `<regarding>.<time in hex><suffix>`, as client-go names Events; at most 253 characters. */
export function eventName(regarding: string, now: Date, suffix: string): string {
  const tail = `${now.getTime().toString(16)}${suffix}`;
  const head = regarding.slice(0, 253 - tail.length - 1).replace(/[-.]+$/, '');
  return `${head}.${tail}`;
}

/** RFC 3339 with microseconds, as the API's MicroTime is written (`micros`: within the millisecond). */
export function microTime(d: Date, micros = 0): string {
  return d.toISOString().replace(/Z$/, `${String(Math.min(Math.max(Math.trunc(micros), 0), 999)).padStart(3, '0')}Z`);
}

/** At most `limit` bytes of UTF-8, cut on a character and marked with `…` when cut. */
export function cutBytes(text: string, limit: number): string {
  if (Buffer.byteLength(text, 'utf8') <= limit) return text;
  const room = limit - Buffer.byteLength('…', 'utf8');
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > room) break;
    out += ch;
    used += size;
  }
  return `${out}…`;
}

/**
 * Why an Event could not be written, in the admin's terms: the permission it lacks (with the
 * verb and resource to grant), the namespace that does not exist, the API server that did not
 * answer, else the API server's own words.
 */
export function eventFailureCause(error: unknown, namespace: string): string {
  const status = apiStatus(error);
  const words = apiMessage(error);
  if (status === 403) return `forbidden: needs create on events.events.k8s.io in namespace ${namespace} (${words})`;
  if (status === 401) return `unauthorized: the API server did not accept the credentials (${words})`;
  if (status === 404) return `not found: ${words}`;
  const network = status === undefined ? networkCode(error) : undefined;
  // Our own bound ("no answer within 5.0 s"): the API server's words are the message itself.
  if (network === 'API_CALL_TIMEOUT')
    return `API server not reachable: ${error instanceof Error ? error.message : words}`;
  if (network) return `API server not reachable: ${words}`;
  return status === undefined ? words : `HTTP ${status}: ${words}`;
}
