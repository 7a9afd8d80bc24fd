// How a run stops on SIGTERM/SIGINT between its stages: each stage is entered through the gate,
// which refuses to start the next one once a signal arrived, and work that changes nothing
// (a render, a preflight) is given up at once instead of awaited.
import { TransientError } from '../common/errors.js';
import type { RunState } from './run-state.js';

/**
 * Marks the stage in progress, after checking that no signal arrived: a SIGTERM during render,
 * preflight or history stops the run before the next stage instead of going on to the upgrade.
 */
export function stageGate(state: RunState): (name: string) => void {
  return (name) => {
    if (state.signal.aborted) {
      throw new TransientError(`interrupted (SIGTERM/SIGINT) during ${state.progress.action}; stopped before ${name}`, {
        hint: 'Run the installer again; a release left pending by an interrupted operation is recovered by the next run.',
      });
    }
    state.progress.action = name;
    // Each stage's start in the debug log: where a run's time goes (the bench's phases read it).
    state.logger?.debug({ stage: name }, 'stage');
  };
}

/** Rejects as soon as the signal fires (the work itself changes nothing, so it is left behind). */
export async function untilAborted<T>(work: Promise<T>, signal: AbortSignal, what: string): Promise<T> {
  if (signal.aborted) throw interrupted(what);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(interrupted(what));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

function interrupted(what: string): TransientError {
  return new TransientError(`interrupted (SIGTERM/SIGINT) during ${what}; nothing was changed`, {
    hint: 'Run the installer again.',
  });
}
