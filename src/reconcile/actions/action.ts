// The one shape of an action (after Flux's internal/reconcile, where each action is a small type
// behind one interface): a function of a narrow port (the helm and cluster calls it needs, and
// nothing else, so its table test drives it against a fake: test/reconcile/actions/) and the step
// decide.ts chose, returning what it found. The loop (act.ts) adds that to the run's `SoFar` and
// decides again. An action never calls another one: what comes next is the decision's.
import type { SoFar, Step } from '../decide.js';

/** The few logger calls actions make (pino's Logger is one). */
interface Log {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What every action may do besides its own calls: log, and enter a stage (refused once a signal came; the termination message names it). */
export interface Narration {
  release: string;
  logger: Log;
  stage(name: string): void;
}

export interface Stoppable {
  /** Aborted by SIGTERM/SIGINT. */
  signal: AbortSignal;
  /** Aborted when another installer took the Lease; its reason is the error the run ends with. */
  leaseLost: AbortSignal;
}

/** What an action found, added to what the run found so far (the loop counts recoveries itself). */
export type Found = Partial<Omit<SoFar, 'recoveries'>>;

export type ActionRun<K extends Step['kind'], Port> = (port: Port, step: Extract<Step, { kind: K }>) => Promise<Found>;

/** Either stop: a signal or a lost Lease (helm is stopped, and rolls back). */
export const stopSignal = (p: Stoppable): AbortSignal => AbortSignal.any([p.signal, p.leaseLost]);

export const firstLine = (error: unknown): string =>
  error instanceof Error ? error.message.split('\n')[0]! : String(error);
