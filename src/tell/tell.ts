// Telling the admin, once `install` has ended: each outcome the run recorded goes out through
// every teller (an Event on the Job, a webhook). Tellers run side by side, each bounded in time
// by itself, and none can fail the run or change its exit code: a failure to tell is a warning
// in the log, never a second failure.
import type { JobOptions } from '../run/event-place.js';
import type { NotifyOptions } from './notify.js';
import type { RunState } from '../run/run-state.js';
import { writeEvents } from './events.js';
import { notifyWebhook } from './notify.js';
import type { Outcome } from '../run/outcome.js';

export interface TellContext {
  /** The run's options that name its Job and its webhook (install's). */
  o: JobOptions & NotifyOptions;
  state: RunState;
}

type Teller = (outcomes: Outcome[], c: TellContext) => Promise<void>;

const tellers: { name: string; teller: Teller }[] = [
  { name: 'events', teller: writeEvents },
  { name: 'webhook', teller: notifyWebhook },
];

export async function tell(outcomes: Outcome[], c: TellContext): Promise<void> {
  if (outcomes.length === 0) return;
  await Promise.all(
    tellers.map(({ name, teller }) =>
      teller(outcomes, c).catch((error: unknown) => {
        const cause = c.state.secrets.maskText(error instanceof Error ? error.message.split('\n')[0]! : String(error));
        c.state.logger?.warn({ teller: name, cause }, `could not tell the admin (${name}); the run's result stands`);
      }),
    ),
  );
}
