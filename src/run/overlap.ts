// Independent stages run at once, their results taken in the order a sequential run would have
// met them: the first stage that failed in that order is the one reported (with its action in
// the run's progress), whatever finished first. So a bad render (invalid input, exit 3) is still
// named before, say, an unreachable cluster found by a read that ran beside it.
import type { Progress } from './run-state.js';

export async function awaitInOrder<T extends readonly unknown[]>(
  progress: Progress,
  steps: { [K in keyof T]: readonly [action: string, result: Promise<T[K]>] },
): Promise<T> {
  // A later step's failure is reported only when every earlier step succeeded.
  for (const [, result] of steps) result.catch(() => {});
  const values: unknown[] = [];
  for (const [action, result] of steps) {
    progress.action = action;
    values.push(await result);
  }
  return values as unknown as T;
}
