// A check that changes nothing, given up the moment SIGTERM/SIGINT arrives: the run stops between
// stages instead of finishing work whose result it will not use (install-command, gated-upgrade).
import { TransientError } from './errors.js';

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

export function interrupted(what: string): TransientError {
  return new TransientError(`interrupted (SIGTERM/SIGINT) during ${what}; nothing was changed`, { hint: 'Run the installer again.' });
}
