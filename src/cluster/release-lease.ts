// One installer at a time per release: a coordination.k8s.io/v1 Lease in the release namespace,
// taken before anything changes, renewed while the run lasts, deleted on exit. A second run
// waits up to a bound, then fails "busy" naming the holder. A Lease whose holder is provably gone
// (its pod ended or was deleted; on this host, its process and its process group are gone:
// lease-holder.ts) is taken over at once; one whose holder stopped renewing it for its duration is
// taken over then, unless its process provably still runs. Holding it is what makes recovering a
// pending release safe: no live installer can be in the middle of that operation.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Lease } from '@kubernetes/client-node';
import { APP_SLUG_ANNOTATION } from '../app-slug.js';
import { ReleaseBusyError, TransientError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isConflict, isNotFound, toInstallerApiError, withApiRetry, withCallTimeout } from './kube-errors.js';
import { kubeModule, type KubeClients } from './kube-client.js';
import { HOLDER_ANNOTATION, judgeHolder, parseHolderRecord, readHolderFacts, selfRecord, type HolderRecord, type HolderVerdict } from './lease-holder.js';

/** How long a Lease stays valid without renewal; renewed every third of it. */
export const LEASE_DURATION_SECONDS = 15;
const RENEW_EVERY_MS = (LEASE_DURATION_SECONDS * 1000) / 3;
const POLL_MS = 1000;

export function leaseName(release: string): string {
  return `helm-installer-${release}`;
}

/** Who we are in holderIdentity: the pod name (hostname in a pod), pid, and a nonce. */
export function newHolderIdentity(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}

export type LeaseState =
  | { kind: 'free' }
  | { kind: 'ours' }
  | { kind: 'held'; holder: string; renewedSecondsAgo: number; expiresInSeconds: number }
  | { kind: 'expired'; holder: string; renewedSecondsAgo: number };

/**
 * Pure. A Lease is expired when its holder has not renewed it for leaseDurationSeconds, by the
 * record's renewTime against our clock, or by how long we have watched the same renewTime
 * unchanged (what client-go's leader election trusts; it holds with clocks apart).
 */
export function leaseState(spec: V1Lease['spec'], identity: string, now: number, unchangedSinceMs?: number): LeaseState {
  const holder = spec?.holderIdentity;
  if (!holder) return { kind: 'free' };
  if (holder === identity) return { kind: 'ours' };
  const duration = (spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
  const renewed = spec?.renewTime ? new Date(spec.renewTime).getTime() : spec?.acquireTime ? new Date(spec.acquireTime).getTime() : 0;
  const ago = now - renewed;
  const watched = unchangedSinceMs === undefined ? 0 : now - unchangedSinceMs;
  if (ago > duration || watched > duration) return { kind: 'expired', holder, renewedSecondsAgo: Math.round(ago / 1000) };
  return { kind: 'held', holder, renewedSecondsAgo: Math.max(0, Math.round(ago / 1000)), expiresInSeconds: Math.max(0, Math.round((duration - ago) / 1000)) };
}

export type LeaseDecision =
  | { action: 'take' }
  | { action: 'take over'; holder: string; why: string; expired: boolean; renewedSecondsAgo: number }
  | { action: 'wait'; holder: string; why?: string };

/**
 * Pure. What to do with the Lease as read, given what is known of its holder: a free Lease (or
 * ours) is taken; a live one is taken over at once only when its holder is provably gone; an
 * expired one is taken over as before, unless its holder's process provably still runs (stalled,
 * its helm maybe still applying: never taken from it).
 */
export function decideLease(state: LeaseState, verdict: HolderVerdict | undefined): LeaseDecision {
  if (state.kind === 'free' || state.kind === 'ours') return { action: 'take' };
  const expired = state.kind === 'expired';
  if (verdict?.kind === 'gone') return { action: 'take over', holder: state.holder, why: verdict.why, expired, renewedSecondsAgo: state.renewedSecondsAgo };
  if (!expired) return { action: 'wait', holder: state.holder, why: verdict?.why };
  if (verdict?.kind === 'alive') return { action: 'wait', holder: state.holder, why: `it has not renewed its Lease for ${state.renewedSecondsAgo}s, but ${verdict.why}` };
  return { action: 'take over', holder: state.holder, why: `it has not renewed its Lease for ${state.renewedSecondsAgo}s`, expired, renewedSecondsAgo: state.renewedSecondsAgo };
}

export interface AcquireOptions {
  namespace: string;
  release: string;
  /** How long to wait for another installer to finish. */
  waitMs: number;
  /** How long the first contact retries an unreachable API server. */
  connectMs: number;
  signal: AbortSignal;
  logger: Logger;
  identity?: string;
  /**
   * Runs once before the release namespace is created for the Lease (it does not exist yet):
   * the checks that must pass before the cluster is touched at all.
   */
  beforeCreatingNamespace?: () => Promise<void>;
  /** Called once if the Lease is held by another installer and this run starts waiting for it. */
  onWaiting?: () => void;
  /**
   * The KOTS app slug (--app-slug): the Lease carries it as `kots.io/app-slug`, so that one a
   * killed run left behind goes with `kubectl kots remove --undeploy` like the release's objects.
   */
  appSlug?: string;
}

export class ReleaseLease {
  private timer?: NodeJS.Timeout;
  private readonly lostController = new AbortController();
  private released = false;

  private constructor(
    private readonly kube: KubeClients,
    private lease: V1Lease,
    readonly identity: string,
    private readonly namespace: string,
    private readonly logger: Logger,
  ) {}

  /** Aborted if another installer took the Lease from us (we were stalled past its duration). */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  get name(): string {
    return this.lease.metadata!.name!;
  }

  static async acquire(kube: KubeClients, o: AcquireOptions): Promise<ReleaseLease> {
    const identity = o.identity ?? newHolderIdentity();
    const name = leaseName(o.release);
    const started = Date.now();
    const api = kube.coordination;
    let observed: { renewTime?: string; since: number } | undefined;
    let announced = '';
    let connected = false;
    const self = selfRecord(kube.server);
    const podsReadable: { forbidden?: string } = {};

    // Plain calls: not-found and conflict are answers the loop handles; the rest are typed.
    const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await withCallTimeout(fn());
      } catch (err) {
        if (isNotFound(err) || isConflict(err)) throw err;
        throw toInstallerApiError(err, what, kube.server);
      }
    };
    const read = (): Promise<V1Lease | undefined> =>
      api.readNamespacedLease({ name, namespace: o.namespace }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });

    // Most runs find no Lease: the first attempt creates it, one round trip instead of a read and
    // then a create; one that exists (409) is read and judged as before.
    let createFirst = true;
    for (;;) {
      if (o.signal.aborted) throw new TransientError(`interrupted while waiting for the lease of release ${o.release}`, { hint: 'Run the installer again.' });
      const what = `reading Lease ${o.namespace}/${name}`;
      // The first call also proves the API server is reachable: it retries transient failures
      // (a control plane still starting) up to --connect-timeout, then exits 5.
      const firstCall = <T>(label: string, fn: () => Promise<T>): Promise<T> =>
        connected
          ? call(label, fn)
          : withApiRetry(() => withCallTimeout(fn()), { boundMs: o.connectMs, signal: o.signal, logger: o.logger, what: label, server: kube.server });
      const current = createFirst ? undefined : await firstCall(what, read);
      createFirst = false;
      const now = Date.now();
      if (!current) {
        const creating = `creating Lease ${o.namespace}/${name}`;
        // Conflict and not-found are answers, not failures: kept from the retry's error typing.
        const outcome = await firstCall(creating, async () => {
          try {
            return await api.createNamespacedLease({ namespace: o.namespace, body: await leaseBody(name, o.namespace, identity, o.release, 0, self, o.appSlug) });
          } catch (err) {
            if (isConflict(err)) return 'exists' as const;
            if (isNotFound(err)) return 'no namespace' as const;
            throw err;
          }
        });
        connected = true;
        if (outcome === 'exists') continue; // someone holds it, or created it first: read it
        if (outcome === 'no namespace') {
          await o.beforeCreatingNamespace?.();
          await createNamespace(kube, o.namespace, o.logger);
          continue;
        }
        o.logger.info({ lease: `${o.namespace}/${name}`, holder: identity }, 'lease acquired: no other installer runs this release');
        return new ReleaseLease(kube, outcome, identity, o.namespace, o.logger).startRenewing();
      }
      connected = true;
      const renewTime = current.spec?.renewTime ? new Date(current.spec.renewTime).toISOString() : undefined;
      if (!observed || observed.renewTime !== renewTime) observed = { renewTime, since: now };
      const state = leaseState(current.spec, identity, now, observed.since);
      // Who holds it, and whether it is provably gone (or alive): a /proc read or one pod GET.
      const verdict = state.kind === 'held' || state.kind === 'expired' ? await holderVerdict(kube, current, state.holder, self, podsReadable) : undefined;
      const decision = decideLease(state, verdict);
      if (decision.action !== 'wait') {
        const transitions = (current.spec?.leaseTransitions ?? 0) + (decision.action === 'take over' ? 1 : 0);
        const body = await leaseBody(name, o.namespace, identity, o.release, transitions, self, o.appSlug);
        // Conditional: of two runs that judged the same Lease, only the first replaces it (409).
        body.metadata!.resourceVersion = current.metadata?.resourceVersion;
        try {
          const taken = await call(`taking Lease ${o.namespace}/${name}`, () => api.replaceNamespacedLease({ name, namespace: o.namespace, body }));
          const lease = `${o.namespace}/${name}`;
          if (decision.action === 'take over' && verdict?.kind === 'gone') {
            o.logger.warn({ lease, previousHolder: decision.holder, renewedSecondsAgo: decision.renewedSecondsAgo }, `holder ${decision.holder} is gone: ${decision.why}; taking the Lease over`);
          } else if (decision.action === 'take over') {
            o.logger.warn(
              { lease, previousHolder: decision.holder, renewedSecondsAgo: decision.renewedSecondsAgo, ...(verdict ? { holderState: verdict.why } : {}) },
              'lease taken over: its holder stopped renewing it (the installer died)',
            );
          } else {
            o.logger.info({ lease, holder: identity }, 'lease acquired: no other installer runs this release');
          }
          return new ReleaseLease(kube, taken, identity, o.namespace, o.logger).startRenewing();
        } catch (err) {
          if (isConflict(err)) continue;
          throw err;
        }
      }
      const renewedSecondsAgo = state.kind === 'held' || state.kind === 'expired' ? state.renewedSecondsAgo : 0;
      const waited = now - started;
      if (waited >= o.waitMs) {
        throw new ReleaseBusyError(
          `release ${o.release} is busy: installer ${decision.holder} holds Lease ${o.namespace}/${name} (renewed ${renewedSecondsAgo}s ago); waited ${Math.round(waited / 1000)}s`,
          {
            hint: `Let that installer finish (kubectl get lease -n ${o.namespace} ${name}); raise --lock-timeout (HELM_INSTALLER_LOCK_TIMEOUT) to wait longer. A holder whose pod has ended is taken over at once; any other dead holder's Lease expires ${LEASE_DURATION_SECONDS}s after its last renewal.${renewedSecondsAgo > LEASE_DURATION_SECONDS ? ' This one has expired, but its process still runs on this host: it is stalled, not dead.' : ''}`,
          },
        );
      }
      if (announced !== decision.holder) {
        if (!announced) o.onWaiting?.();
        announced = decision.holder;
        o.logger.info(
          { lease: `${o.namespace}/${name}`, holder: decision.holder, renewedSecondsAgo, waitSeconds: Math.round(o.waitMs / 1000), ...(decision.why ? { holderState: decision.why } : {}) },
          'another installer holds this release: waiting for it',
        );
      }
      await sleep(Math.min(POLL_MS, Math.max(50, o.waitMs - waited)), undefined, { signal: o.signal }).catch(() => undefined);
    }
  }

  private startRenewing(): this {
    this.timer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.timer.unref();
    return this;
  }

  private async renew(): Promise<void> {
    if (this.released) return;
    const api = this.kube.coordination;
    const body: V1Lease = { ...this.lease, spec: { ...this.lease.spec, renewTime: await microNow() } };
    try {
      this.lease = await withCallTimeout(api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }), RENEW_EVERY_MS);
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) {
        const now = await api.readNamespacedLease({ name: this.name, namespace: this.namespace }).catch(() => undefined);
        if (now?.spec?.holderIdentity === this.identity) {
          this.lease = now;
          return this.renew();
        }
        this.logger.error({ lease: `${this.namespace}/${this.name}`, holder: now?.spec?.holderIdentity }, 'lease lost to another installer: stopping this run');
        this.lostController.abort(new ReleaseBusyError(`the Lease ${this.namespace}/${this.name} was taken by ${now?.spec?.holderIdentity ?? 'another installer'} while this run held it`));
        this.stop();
        return;
      }
      this.logger.warn({ lease: `${this.namespace}/${this.name}`, cause: (err as Error).message?.split('\n')[0] }, 'lease renewal failed; retrying');
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Deletes the Lease if it is still ours; errors are logged, never thrown (this runs on exit). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stop();
    if (this.lost.aborted) return;
    try {
      await withCallTimeout(
        this.kube.coordination.deleteNamespacedLease({
          name: this.name,
          namespace: this.namespace,
          body: { preconditions: { resourceVersion: this.lease.metadata?.resourceVersion } },
        }),
        5000,
      );
      this.logger.debug({ lease: `${this.namespace}/${this.name}` }, 'lease released');
    } catch (err) {
      if (isNotFound(err)) return;
      this.logger.warn({ lease: `${this.namespace}/${this.name}`, cause: (err as Error).message?.split('\n')[0] }, `could not release the lease; it expires in ${LEASE_DURATION_SECONDS}s`);
    }
  }
}

/** What is known of the Lease's holder; never throws (an error is "unsure": wait as before). */
async function holderVerdict(kube: KubeClients, lease: V1Lease, holder: string, self: HolderRecord, podsReadable: { forbidden?: string }): Promise<HolderVerdict> {
  const record = parseHolderRecord(lease.metadata?.annotations?.[HOLDER_ANNOTATION], holder);
  try {
    return judgeHolder(record, self, await readHolderFacts(kube, record, self, podsReadable));
  } catch (err) {
    return { kind: 'unsure', why: `could not look it up: ${(err as Error).message?.split('\n')[0]}` };
  }
}

async function microNow(): Promise<Date> {
  const k8s = await kubeModule();
  return new k8s.V1MicroTime();
}

async function leaseBody(name: string, namespace: string, identity: string, release: string, transitions: number, self: HolderRecord, appSlug?: string): Promise<V1Lease> {
  const now = await microNow();
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'helm-installer', 'helm-installer/release': release },
      // Where this process lives, for a later run to prove it gone (lease-holder.ts).
      annotations: { [HOLDER_ANNOTATION]: JSON.stringify(self), ...(appSlug !== undefined ? { [APP_SLUG_ANNOTATION]: appSlug } : {}) },
    },
    spec: { holderIdentity: identity, leaseDurationSeconds: LEASE_DURATION_SECONDS, acquireTime: now, renewTime: now, leaseTransitions: transitions },
  };
}

/** The release namespace may not exist before the first install (helm --create-namespace). */
async function createNamespace(kube: KubeClients, namespace: string, logger: Logger): Promise<void> {
  try {
    await withCallTimeout(kube.core.createNamespace({ body: { metadata: { name: namespace } } }));
    logger.info({ namespace }, 'namespace created (for the release and its lease)');
  } catch (err) {
    if (isConflict(err)) return;
    throw toInstallerApiError(err, `creating namespace ${namespace}`, kube.server);
  }
}
