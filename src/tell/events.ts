// Teller: one Kubernetes Event (events.k8s.io/v1) per outcome, on the Job the installer runs in
// (`kubectl describe job` lists them) or, outside a Job, on the release's namespace. Bounded in
// time (each write, and all of them together); an Event that cannot be written is named in the
// log with why (the permission it lacks, the API server down), never the run's failure.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfigurationOptions, EventsV1Event } from '@kubernetes/client-node';
import { connectKube, kubeModule, type KubeClients } from '../cluster/kube-client.js';
import { apiMessage, isTransientApiError } from '../cluster/kube-errors.js';
import type { Logger } from 'pino';
import type { RunState } from '../run/run-state.js';
import { eventBody, eventFailureCause, type EventBody } from './event-body.js';
import { type JobOptions, type JobRef, placeOf, runJob } from '../run/event-place.js';
import type { Outcome } from '../run/outcome.js';

export interface EventBounds {
  /** One Event: its attempts (a transient failure is tried again) end this long after the first. */
  perEventMs: number;
  /** All of them, the Job's uid read included. */
  overallMs: number;
}

/** What a teller is given (tell.ts's TellContext, not imported: tell.ts imports this teller). */
interface TellContext {
  o: JobOptions;
  state: RunState;
}

const BOUNDS: EventBounds = { perEventMs: 5000, overallMs: 12_000 };
/** Events written at once (a release plan has one or more per release). */
const PARALLEL = 8;

export async function writeEvents(outcomes: Outcome[], c: TellContext, bounds: EventBounds = BOUNDS): Promise<void> {
  const deadline = Date.now() + bounds.overallMs;
  const logger = c.state.logger;
  const kube = c.state.kube ?? (await connectKube());
  const k8s = await kubeModule();
  const api = kube.config.makeApiClient(k8s.EventsV1Api);
  const job = await withUid(runJob(c.o, kube.config), kube, deadline, logger);
  const instance = process.env.POD_NAME || hostname();
  const mask = (t: string) => c.state.secrets.maskText(t);
  const failed: { body: EventBody; outcome: Outcome; cause: string }[] = [];
  let written = 0;
  const now = new Date();
  await inParallel(outcomes, PARALLEL, async (outcome, sequence) => {
    const body = eventBody(outcome, placeOf(outcome, job), {
      now,
      sequence,
      instance,
      suffix: randomBytes(4).toString('hex'),
      mask,
    });
    try {
      const eventDeadline = Math.min(deadline, Date.now() + bounds.perEventMs);
      await attempt(eventDeadline, (signal) =>
        api.createNamespacedEvent(
          { namespace: body.metadata.namespace, body: body as unknown as EventsV1Event },
          withSignal(signal),
        ),
      );
      written += 1;
      logger?.debug(
        {
          event: `${body.metadata.namespace}/${body.metadata.name}`,
          reason: body.reason,
          release: `${outcome.namespace}/${outcome.release}`,
        },
        'event written',
      );
    } catch (error) {
      failed.push({ body, outcome, cause: mask(eventFailureCause(error, body.metadata.namespace)) });
    }
  });
  const on = job ? `Job ${job.namespace}/${job.name}` : 'the release namespace';
  if (written > 0) logger?.info({ events: written, on }, `${written} Event(s) written on ${on}`);
  // One line per cause (a missing permission fails every Event the same way), naming each Event.
  const byCause = new Map<string, typeof failed>();
  for (const f of failed) byCause.set(f.cause, [...(byCause.get(f.cause) ?? []), f]);
  for (const [cause, group] of byCause) {
    const events = group.map(
      (f) =>
        `${f.body.reason} (${f.body.type}) for release ${f.outcome.namespace}/${f.outcome.release} on ${f.body.regarding.kind} ${f.body.metadata.namespace}/${f.body.regarding.name}`,
    );
    logger?.warn(
      { events, cause },
      `could not write ${group.length} Event(s): ${events.join('; ')}: ${cause}; the run's result stands`,
    );
  }
}

/**
 * The Job's uid, read when the options have its name only (a cluster older than 1.27 has no
 * batch.kubernetes.io/controller-uid label): without it `kubectl describe job` does not list the
 * Events. A read that fails leaves it out, said once in the log.
 */
async function withUid(
  job: JobRef | undefined,
  kube: KubeClients,
  deadline: number,
  logger: Logger | undefined,
): Promise<JobRef | undefined> {
  if (!job || job.uid) return job;
  try {
    const read = await attempt(Math.min(deadline, Date.now() + 3000), (signal) =>
      kube.batch.readNamespacedJob({ name: job.name, namespace: job.namespace }, withSignal(signal)),
    );
    if (read.metadata?.uid) return { ...job, uid: read.metadata.uid };
  } catch (error) {
    logger?.warn(
      { job: `${job.namespace}/${job.name}`, cause: apiMessage(error) },
      `cannot read Job ${job.namespace}/${job.name} for its uid: its Events are written without it (kubectl describe job does not list them; set HELM_INSTALLER_JOB_UID)`,
    );
  }
  return job;
}

/**
 * Calls `call` until it answers, fails for good (not transient), has failed three times (an API
 * server that refuses connections is not waited for) or the deadline; each call is cut there.
 */
async function attempt<T>(deadline: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const started = Date.now();
  let delay = 200;
  for (let tries = 1; ; tries++) {
    const signal = AbortSignal.timeout(Math.max(deadline - Date.now(), 1));
    try {
      return await call(signal);
    } catch (error) {
      const waited = ((Date.now() - started) / 1000).toFixed(1);
      const err = signal.aborted
        ? Object.assign(new Error(`no answer within ${waited} s`), { code: 'API_CALL_TIMEOUT' })
        : error;
      if (!isTransientApiError(err) || tries >= 3 || Date.now() + delay >= deadline) throw err;
      await sleep(delay);
      delay = Math.min(delay * 2, 1000);
    }
  }
}

/**
 * A request option that ends the call (its connection included) when the signal fires: a
 * middleware that hands the signal to the request (the client's fetch passes it on). The
 * generated API calls a middleware's pre/post and takes `.toPromise()` of what they return.
 */
function withSignal(signal: AbortSignal): ConfigurationOptions {
  const settled = <T>(value: T) => ({ toPromise: () => Promise.resolve(value) });
  const middleware = {
    pre: (context: { setSignal(s: AbortSignal): void }) => {
      context.setSignal(signal);
      return settled(context);
    },
    post: <R>(response: R) => settled(response),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' } as unknown as ConfigurationOptions;
}

async function inParallel<T>(items: T[], n: number, each: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await each(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}
