// A fake of what every action's port shares: each call it gets is one line of `calls`, in order,
// so a test states the exact calls an action made (log lines by their message).
import type { Narration, Stoppable } from '../../../src/reconcile/actions/action.js';

export interface Recorder {
  calls: string[];
  /** Records `name args...` and returns `result`. */
  call<T>(name: string, result: T, ...args: unknown[]): T;
}

export function recorder(): Recorder {
  const calls: string[] = [];
  return {
    calls,
    call(name, result, ...args) {
      calls.push([name, ...args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))].join(' '));
      return result;
    },
  };
}

export function narration(r: Recorder): Narration {
  const log = (level: string) => (_fields: object, message: string) => void r.call(level, undefined, message);
  return {
    release: 'shop',
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    stage: (name) => void r.call('stage', undefined, name),
  };
}

export function stoppable(): Stoppable & { stop: AbortController; loseLease: AbortController } {
  const stop = new AbortController();
  const loseLease = new AbortController();
  return { signal: stop.signal, leaseLost: loseLease.signal, stop, loseLease };
}
