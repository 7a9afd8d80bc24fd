// The rounds while helm waits: the release's problems read at intervals (read-problems.ts),
// progress lines at the interval asked for, what was not ready kept for the failure summary, and
// a pod that stays hopeless past the bound reported so the caller stops helm.
import type { Logger } from 'pino';
import { readProblems } from './read-problems.js';
import {
  describeProblems,
  type DiagnosisScope,
  HopelessTracker,
  nextPollDelay,
  pollPlan,
  type Problem,
} from './wait-diagnosis.js';

export interface WaitWatch {
  /** Set when a pod stayed hopeless past the bound: helm was asked to stop. */
  readonly failedFast?: Problem[];
  /** The latest problems seen with events and logs (helm's rollback may remove the pods). */
  readonly lastSeen: Problem[];
  stop(): void;
}

interface WatchOptions {
  intervalMs: number;
  failFastMs: number;
  logger: Logger;
  onHopeless: (problems: Problem[]) => void;
}

interface WatchState {
  failedFast?: Problem[];
  stopped: boolean;
  lastLog: number;
  lastSeen: Problem[];
}

/**
 * While helm waits: every intervalMs logs what is not ready and why; when a pod stays in a
 * hopeless state for failFastMs, calls onHopeless (the caller stops helm, which rolls back).
 */
export function watchWhileHelmWaits(scope: DiagnosisScope, o: WatchOptions): WaitWatch {
  const tracker = new HopelessTracker();
  const state: WatchState = { stopped: false, lastLog: Date.now(), lastSeen: [] };
  // Polls faster than it logs, so the fail-fast bound is kept to a few seconds; a whole number of
  // polls per progress interval, so progress lines come at the interval asked for.
  // Never more than a read per second, whatever was asked; an interval of 0 logs no progress.
  const { pollMs, logEveryMs } = pollPlan(o.intervalMs, o.failFastMs);
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    if (state.stopped) return;
    const began = Date.now();
    try {
      await watchRound(scope, o, state, tracker, logEveryMs);
    } catch (err) {
      o.logger.debug({ cause: (err as Error).message?.split('\n')[0] }, 'progress read failed');
    } finally {
      if (!state.stopped && !state.failedFast)
        timer = setTimeout(() => void round(), nextPollDelay(pollMs, Date.now() - began));
    }
  };
  timer = setTimeout(() => void round(), pollMs);
  return {
    get failedFast() {
      return state.failedFast;
    },
    get lastSeen() {
      return state.lastSeen;
    },
    stop() {
      state.stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** One read: fail fast, or keep what is not ready and log progress when its interval is up. */
async function watchRound(
  scope: DiagnosisScope,
  o: WatchOptions,
  state: WatchState,
  tracker: HopelessTracker,
  logEveryMs: number,
): Promise<void> {
  const found = { objects: 0 };
  const problems = await readProblems(scope, {}, found);
  const now = Date.now();
  const hopeless = tracker.update(problems, now, o.failFastMs);
  if (hopeless.length > 0 && !state.failedFast) return failFast(scope, o, state, hopeless);
  state.lastSeen = keptProblems(state.lastSeen, problems, found.objects);
  if (now - state.lastLog >= logEveryMs) {
    state.lastLog = now;
    if (problems.length > 0) {
      const detailed = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
      if (detailed.length > 0) state.lastSeen = detailed;
      o.logger.info({ notReady: describeProblems(state.lastSeen) }, `waiting: ${problems.length} not ready`);
    } else o.logger.info('waiting: every pod of the release is ready; helm is finishing');
  }
}

/**
 * The hopeless state as seen, with the Events and log lines of a second read (by then a
 * crash-looping container may show as terminated again: its reason stays the one seen); logged,
 * then handed to the caller, which stops helm.
 */
async function failFast(scope: DiagnosisScope, o: WatchOptions, state: WatchState, hopeless: Problem[]): Promise<void> {
  const detailed = await readProblems(scope, { withEvents: true, withLogs: true }).catch(() => [] as Problem[]);
  state.failedFast = hopeless.map((p) => {
    const d =
      detailed.find((x) => x.object === p.object && x.container === p.container) ??
      detailed.find((x) => x.object === p.object);
    return { ...p, event: d?.event, logTail: d?.logTail };
  });
  o.logger.error(
    { notReady: describeProblems(state.failedFast) },
    `failing fast: ${state.failedFast[0]!.object} stayed ${state.failedFast[0]!.reason} for ${Math.round(o.failFastMs / 1000)}s; stopping helm (it rolls back)`,
  );
  o.onHopeless(state.failedFast);
}

/**
 * Pure: what was not ready, kept for the failure summary: helm's rollback removes the objects
 * before helm exits, so a read after it (or a round in between) finds nothing. Cleared only when
 * the release's objects are there and ready; refreshed every round, with the Events and log lines
 * of the last detailed read kept for the same objects.
 */
function keptProblems(lastSeen: Problem[], problems: Problem[], objectsFound: number): Problem[] {
  if (problems.length === 0) return objectsFound > 0 ? [] : lastSeen;
  const before = new Map(lastSeen.map((p) => [`${p.object}/${p.container ?? ''}`, p]));
  return problems.map((p) => {
    const seen = before.get(`${p.object}/${p.container ?? ''}`);
    return seen ? { ...p, event: seen.event, logTail: seen.logTail } : p;
  });
}
