// Runs the app's releases (one chart is a list of one), each installed by install.ts, side by
// side where the graph allows. Every release first reads its state and runs its checks (render, registry,
// RBAC) at once; then it waits at its gate (install.ts calls PlanMember.gate before the Lease):
// until every release of the plan has passed its checks (bad input anywhere: nothing starts),
// and until each of its dependencies is deployed and ready (helm --wait, or unchanged and
// healthy). A release whose dependency failed is not attempted; unrelated ones go on.
// `maxParallel` bounds both the releases checking at once and those changing the cluster.
// A release without a key (one chart) is the run's own: its state, and its failure, are the
// run's, which main.ts reports as it always has.
import type { InstallOptions } from '../reconcile/install-options.js';
import type { PlanMember } from '../run/run-context.js';
import { failureSummary, toInstallerError, writeSummary } from '../run/report.js';
import type { RunState } from '../run/run-state.js';
import { recordFailure } from '../run/record.js';
import type { ScheduledRelease } from '../inputs/app-input.js';
import type { ReleaseOutcome } from './release-outcome.js';
import { releaseOptions } from './release-options.js';

/** Thrown at a gate: the release was never started, through no fault of its own. */
class NotAttempted extends Error {}

export type InstallOne = (o: InstallOptions, state: RunState, member: PlanMember) => Promise<number>;

export interface GraphRun {
  maxParallel: number;
  state: RunState;
  install: InstallOne;
  /** Release labels that mark each release as the app's (a release plan's); none for one chart. */
  labels?: Record<string, string>;
  /** A release that fails stops every release not started yet (the app goes back as one). */
  stopOnFailure?: boolean;
}

/** `releases`: each after its dependencies. */
export async function runGraph(releases: ScheduledRelease<InstallOptions>[], c: GraphRun): Promise<ReleaseOutcome[]> {
  const start = new Slots(c.maxParallel);
  const act = new Slots(c.maxParallel);
  const deployed = new Map(releases.map((r) => [r.key, deferred<boolean>()]));
  const allChecked = deferred<void>();
  let unchecked = releases.length;
  let stopAll: string | undefined;

  const one = async (r: ScheduledRelease<InstallOptions>): Promise<ReleaseOutcome> => {
    const started = Date.now();
    let checked = false;
    let passedGate = false;
    // Which slot this release holds: set inside the gate too, so kept in an object.
    const held = { start: false, act: false };
    const markChecked = () => {
      if (checked) return;
      checked = true;
      if (--unchecked === 0) allChecked.resolve();
    };
    const member: PlanMember = {
      labels: c.labels ?? {},
      gate: async () => {
        start.release();
        held.start = false;
        markChecked();
        await allChecked.promise;
        if (stopAll) throw new NotAttempted(stopAll);
        for (const d of r.deps)
          if (!(await deployed.get(d)!.promise)) throw new NotAttempted(`its dependency ${d} was not deployed`);
        await act.acquire();
        held.act = true;
        // Another release may have failed while this one waited for its turn.
        if (stopAll) throw new NotAttempted(stopAll);
        passedGate = true;
      },
    };
    const state = r.key ? memberState(c.state, r.key) : c.state;
    await start.acquire();
    held.start = true;
    try {
      const exitCode = await c.install(releaseOptions(r), state, member);
      deployed.get(r.key)!.resolve(true);
      return doneOutcome(r.key ?? '', member, exitCode, started);
    } catch (error) {
      deployed.get(r.key)!.resolve(false);
      // One chart: main.ts writes the failure summary, the Event and the exit code, as always.
      if (!r.key) throw error;
      if (error instanceof NotAttempted) return { key: r.key, status: 'not attempted', because: error.message };
      stopAll ??= stopReason(r.key, passedGate, c.stopOnFailure);
      return failedOutcome(r.key, error, state, started);
    } finally {
      markChecked();
      if (held.start) start.release();
      if (held.act) act.release();
    }
  };
  return Promise.all(releases.map(one));
}

/** A release install finished: what it did (as install.ts left it on the member) and how long it took. */
function doneOutcome(key: string, member: PlanMember, exitCode: number, started: number): ReleaseOutcome {
  const outcome = member.outcome;
  return {
    key,
    status: 'done',
    action: outcome?.action ?? 'done',
    revision: outcome?.revision,
    ...(outcome?.chart ? { chart: outcome.chart } : {}),
    seconds: (Date.now() - started) / 1000,
    exitCode,
  };
}

/** Why the releases not started yet are not attempted after this one failed, if they are not. */
function stopReason(key: string, passedGate: boolean, stopOnFailure: boolean | undefined): string | undefined {
  // A failure before the gate is a failed check: nothing of the plan may start.
  if (!passedGate) return `${key} failed its checks, so no release was started`;
  return stopOnFailure ? `${key} failed, so the app goes back to its last good revision` : undefined;
}

/**
 * The release's whole failure summary (helm's details, the pods that were not ready) goes to the
 * log as a single chart's would, and its failure is recorded; the plan's summary keeps one line of it.
 */
function failedOutcome(key: string, error: unknown, state: RunState, started: number): ReleaseOutcome {
  writeSummary(undefined, { summary: failureSummary(error, { ...state.progress, release: key }, state.secrets) });
  recordFailure(state, error, state.progress, started);
  return { key, status: 'failed', error: toInstallerError(error), seconds: (Date.now() - started) / 1000 };
}

/** Each release's own progress and log bindings; the signal and the secrets are the run's. */
export function memberState(state: RunState, key: string): RunState {
  return {
    signal: state.signal,
    secrets: state.secrets,
    progress: { action: 'starting' },
    bindings: { releaseKey: key },
    outcomes: state.outcomes,
  };
}

/** A counting semaphore: at most `n` holders. */
export class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
