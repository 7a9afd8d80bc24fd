// Taking the release's Lease (release-lease.ts): create it, or read it and judge it
// (lease-decision.ts): take it when free or its holder is gone, else wait and look again, up to
// --lock-timeout, then fail "busy" naming the holder.
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Lease } from '@kubernetes/client-node';
import { APP_SLUG_ANNOTATION } from '../common/app-slug.js';
import { ReleaseBusyError, TransientError } from '../common/errors.js';
import type { Logger } from 'pino';
import { isConflict, isNotFound, toInstallerApiError, withApiRetry, withCallTimeout } from './kube-errors.js';
import { kubeModule, type KubeClients } from './kube-client.js';
import {
  decideLease,
  LEASE_DURATION_SECONDS,
  leaseName,
  leaseState,
  newHolderIdentity,
  type LeaseDecision,
  type LeaseState,
} from './lease-decision.js';
import {
  HOLDER_ANNOTATION,
  judgeHolder,
  parseHolderRecord,
  readHolderFacts,
  selfRecord,
  type HolderRecord,
  type HolderVerdict,
} from './lease-holder.js';

const POLL_MS = 1000;

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

/** The Lease, ours, and who we are in it. */
export async function acquireLease(
  kube: KubeClients,
  o: AcquireOptions,
): Promise<{ lease: V1Lease; identity: string }> {
  const attempt = new LeaseAttempt(kube, o);
  // Most runs find no Lease: the first attempt creates it, one round trip instead of a read and
  // then a create; one that exists (409) is read and judged.
  let lease: V1Lease | undefined;
  for (let first = true; !lease; first = false) {
    if (o.signal.aborted)
      throw new TransientError(`interrupted while waiting for the lease of release ${o.release}`, {
        hint: 'Run the installer again.',
      });
    const current = first ? undefined : await attempt.read();
    lease = current ? await attempt.judge(current) : await attempt.create();
  }
  return { lease, identity: attempt.identity };
}

/** One acquisition: what it has seen of the Lease so far. Each step returns the Lease once ours, else undefined (look again). */
class LeaseAttempt {
  readonly identity: string;
  private readonly name: string;
  private readonly where: string;
  private readonly started = Date.now();
  private readonly self: HolderRecord;
  private readonly podsReadable: { forbidden?: string } = {};
  /** The renewTime last read, and since when we have seen it unchanged (leaseState). */
  private observed?: { renewTime?: string; since: number };
  private announced = '';
  private connected = false;

  constructor(
    private readonly kube: KubeClients,
    private readonly o: AcquireOptions,
  ) {
    this.identity = o.identity ?? newHolderIdentity();
    this.name = leaseName(o.release);
    this.where = `${o.namespace}/${this.name}`;
    this.self = selfRecord(kube.server);
  }

  read(): Promise<V1Lease | undefined> {
    return this.firstCall(`reading Lease ${this.where}`, () =>
      this.kube.coordination
        .readNamespacedLease({ name: this.name, namespace: this.o.namespace })
        .catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        }),
    );
  }

  /** Creates the Lease; undefined when it exists (read it next) or its namespace had to be created first. */
  async create(): Promise<V1Lease | undefined> {
    const { o } = this;
    // Conflict and not-found are answers, not failures: kept from the retry's error typing.
    const outcome = await this.firstCall(`creating Lease ${this.where}`, async () => {
      try {
        return await this.kube.coordination.createNamespacedLease({ namespace: o.namespace, body: await this.body(0) });
      } catch (err) {
        if (isConflict(err)) return 'exists' as const;
        if (isNotFound(err)) return 'no namespace' as const;
        throw err;
      }
    });
    if (outcome === 'exists') return undefined; // someone holds it, or created it first
    if (outcome === 'no namespace') {
      await o.beforeCreatingNamespace?.();
      await createNamespace(this.kube, o.namespace, o.logger);
      return undefined;
    }
    o.logger.info({ lease: this.where, holder: this.identity }, 'lease acquired: no other installer runs this release');
    return outcome;
  }

  /** Takes the Lease as read when it may be taken; else waits a poll, or fails busy when --lock-timeout has passed. */
  async judge(current: V1Lease): Promise<V1Lease | undefined> {
    const now = Date.now();
    const renewTime = current.spec?.renewTime ? new Date(current.spec.renewTime).toISOString() : undefined;
    if (!this.observed || this.observed.renewTime !== renewTime) this.observed = { renewTime, since: now };
    const state = leaseState(current.spec, this.identity, now, this.observed.since);
    // Who holds it, and whether it is provably gone (or alive): a /proc read or one pod GET.
    const verdict =
      state.kind === 'held' || state.kind === 'expired'
        ? await holderVerdict(this.kube, current, state.holder, this.self, this.podsReadable)
        : undefined;
    const decision = decideLease(state, verdict);
    if (decision.action !== 'wait') return this.take(current, decision, verdict);
    await this.wait(state, decision, now);
    return undefined;
  }

  private async take(
    current: V1Lease,
    decision: Exclude<LeaseDecision, { action: 'wait' }>,
    verdict: HolderVerdict | undefined,
  ): Promise<V1Lease | undefined> {
    const { o } = this;
    const body = await this.body((current.spec?.leaseTransitions ?? 0) + (decision.action === 'take over' ? 1 : 0));
    // Conditional: of two runs that judged the same Lease, only the first replaces it (409).
    body.metadata!.resourceVersion = current.metadata?.resourceVersion;
    let taken: V1Lease;
    try {
      taken = await this.call(`taking Lease ${this.where}`, () =>
        this.kube.coordination.replaceNamespacedLease({ name: this.name, namespace: o.namespace, body }),
      );
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
    if (decision.action === 'take over' && verdict?.kind === 'gone') {
      o.logger.warn(
        { lease: this.where, previousHolder: decision.holder, renewedSecondsAgo: decision.renewedSecondsAgo },
        `holder ${decision.holder} is gone: ${decision.why}; taking the Lease over`,
      );
    } else if (decision.action === 'take over') {
      o.logger.warn(
        {
          lease: this.where,
          previousHolder: decision.holder,
          renewedSecondsAgo: decision.renewedSecondsAgo,
          ...(verdict ? { holderState: verdict.why } : {}),
        },
        'lease taken over: its holder stopped renewing it (the installer died)',
      );
    } else {
      o.logger.info(
        { lease: this.where, holder: this.identity },
        'lease acquired: no other installer runs this release',
      );
    }
    return taken;
  }

  private async wait(
    state: LeaseState,
    decision: Extract<LeaseDecision, { action: 'wait' }>,
    now: number,
  ): Promise<void> {
    const { o } = this;
    const renewedSecondsAgo = state.kind === 'held' || state.kind === 'expired' ? state.renewedSecondsAgo : 0;
    const waited = now - this.started;
    if (waited >= o.waitMs) {
      throw new ReleaseBusyError(
        `release ${o.release} is busy: installer ${decision.holder} holds Lease ${this.where} (renewed ${renewedSecondsAgo}s ago); waited ${Math.round(waited / 1000)}s`,
        {
          hint: `Let that installer finish (kubectl get lease -n ${o.namespace} ${this.name}); raise --lock-timeout (HELM_INSTALLER_LOCK_TIMEOUT) to wait longer. A holder whose pod has ended is taken over at once; any other dead holder's Lease expires ${LEASE_DURATION_SECONDS}s after its last renewal.${renewedSecondsAgo > LEASE_DURATION_SECONDS ? ' This one has expired, but its holder still runs (its process on this host, or its pod Running and Ready): it is stalled or slow, not dead.' : ''}`,
        },
      );
    }
    if (this.announced !== decision.holder) {
      if (!this.announced) o.onWaiting?.();
      this.announced = decision.holder;
      o.logger.info(
        {
          lease: this.where,
          holder: decision.holder,
          renewedSecondsAgo,
          waitSeconds: Math.round(o.waitMs / 1000),
          ...(decision.why ? { holderState: decision.why } : {}),
        },
        'another installer holds this release: waiting for it',
      );
    }
    await sleep(Math.min(POLL_MS, Math.max(50, o.waitMs - waited)), undefined, { signal: o.signal }).catch(
      () => undefined,
    );
  }

  private body(transitions: number): Promise<V1Lease> {
    return leaseBody(
      this.name,
      this.o.namespace,
      this.identity,
      this.o.release,
      transitions,
      this.self,
      this.o.appSlug,
    );
  }

  /** Plain calls: not-found and conflict are answers the loop handles; the rest are typed. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await withCallTimeout(fn());
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) throw err;
      throw toInstallerApiError(err, what, this.kube.server);
    }
  }

  /**
   * The first call also proves the API server is reachable: it retries transient failures (a
   * control plane still starting) up to --connect-timeout, then exits 5.
   */
  private async firstCall<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.connected) return this.call(what, fn);
    const result = await withApiRetry(() => withCallTimeout(fn()), {
      boundMs: this.o.connectMs,
      signal: this.o.signal,
      logger: this.o.logger,
      what,
      server: this.kube.server,
    });
    this.connected = true;
    return result;
  }
}

/** What is known of the Lease's holder; never throws (an error is "unsure": wait as before). */
async function holderVerdict(
  kube: KubeClients,
  lease: V1Lease,
  holder: string,
  self: HolderRecord,
  podsReadable: { forbidden?: string },
): Promise<HolderVerdict> {
  const record = parseHolderRecord(lease.metadata?.annotations?.[HOLDER_ANNOTATION], holder);
  try {
    return judgeHolder(record, self, await readHolderFacts(kube, record, self, podsReadable));
  } catch (err) {
    return { kind: 'unsure', why: `could not look it up: ${(err as Error).message?.split('\n')[0]}` };
  }
}

export async function microNow(): Promise<Date> {
  const k8s = await kubeModule();
  return new k8s.V1MicroTime();
}

async function leaseBody(
  name: string,
  namespace: string,
  identity: string,
  release: string,
  transitions: number,
  self: HolderRecord,
  appSlug?: string,
): Promise<V1Lease> {
  const now = await microNow();
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace,
      labels: { 'app.kubernetes.io/managed-by': 'helm-installer', 'helm-installer/release': release },
      // Where this process lives, for a later run to prove it gone (lease-holder.ts).
      annotations: {
        [HOLDER_ANNOTATION]: JSON.stringify(self),
        ...(appSlug !== undefined ? { [APP_SLUG_ANNOTATION]: appSlug } : {}),
      },
    },
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: LEASE_DURATION_SECONDS,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: transitions,
    },
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
