// One installer at a time per release: a coordination.k8s.io/v1 Lease in the release namespace,
// taken before anything changes, renewed while the run lasts, deleted on exit. A second run
// waits up to a bound, then fails "busy" naming the holder. A Lease whose holder is provably gone
// (its pod ended or was deleted; on this host, its process and its process group are gone:
// lease-holder.ts) is taken over at once; one whose holder stopped renewing it for its duration is
// taken over then, unless its process provably still runs. Holding it is what makes recovering a
// pending release safe: no live installer can be in the middle of that operation.
import type { V1Lease } from '@kubernetes/client-node';
import { ReleaseBusyError } from '../common/errors.js';
import type { Logger } from 'pino';
import { isConflict, isNotFound, isTransientApiError, withCallTimeout } from './kube-errors.js';
import type { KubeClients } from './kube-client.js';
import { acquireLease, microNow, type AcquireOptions } from './lease-acquire.js';
import { LEASE_DURATION_SECONDS } from './lease-decision.js';

/** Renewed every third of the Lease's duration. */
const RENEW_EVERY_MS = (LEASE_DURATION_SECONDS * 1000) / 3;
/** How long the release on exit may take in all (a pod's SIGTERM grace is 30 s by default). */
const RELEASE_WITHIN_MS = 10_000;

export class ReleaseLease {
  private timer?: NodeJS.Timeout;
  private readonly lostController = new AbortController();
  private released = false;
  /** The renewal under way, if any: its answer carries the resourceVersion the release needs. */
  private renewing?: Promise<void>;

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

  /** Takes the release's Lease, waiting for another installer up to --lock-timeout (lease-acquire.ts). */
  static async acquire(kube: KubeClients, o: AcquireOptions): Promise<ReleaseLease> {
    const { lease, identity } = await acquireLease(kube, o);
    return new ReleaseLease(kube, lease, identity, o.namespace, o.logger).startRenewing();
  }

  private startRenewing(): this {
    // One renewal at a time: on a loaded machine one may outlast the interval.
    this.timer = setInterval(() => {
      this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
    }, RENEW_EVERY_MS);
    this.timer.unref();
    return this;
  }

  private async renew(): Promise<void> {
    if (this.released) return;
    const api = this.kube.coordination;
    const body: V1Lease = { ...this.lease, spec: { ...this.lease.spec, renewTime: await microNow() } };
    try {
      this.lease = await withCallTimeout(
        api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }),
        RENEW_EVERY_MS,
      );
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) {
        const now = await api
          .readNamespacedLease({ name: this.name, namespace: this.namespace })
          .catch(() => undefined);
        if (now?.spec?.holderIdentity === this.identity) {
          this.lease = now;
          return this.renew();
        }
        this.logger.error(
          { lease: `${this.namespace}/${this.name}`, holder: now?.spec?.holderIdentity },
          'lease lost to another installer: stopping this run',
        );
        this.lostController.abort(
          new ReleaseBusyError(
            `the Lease ${this.namespace}/${this.name} was taken by ${now?.spec?.holderIdentity ?? 'another installer'} while this run held it`,
          ),
        );
        this.stop();
        return;
      }
      this.logger.warn(
        { lease: `${this.namespace}/${this.name}`, cause: (err as Error).message?.split('\n')[0] },
        'lease renewal failed; retrying',
      );
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Deletes the Lease if it is still ours; errors are logged, never thrown (this runs on exit).
   * A renewal in flight is waited for first: its answer changes the resourceVersion, and a delete
   * conditional on the one before failed with a conflict and left the Lease behind (issue 40).
   * A conflict is read again: still ours (a renewal whose answer was lost to a timeout landed
   * after all), it is deleted at its new version; another's, it is left.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.stop();
    await this.renewing;
    if (this.lost.aborted) return;
    const where = `${this.namespace}/${this.name}`;
    const until = Date.now() + RELEASE_WITHIN_MS;
    for (;;) {
      const err = await this.deleteOnce(Math.max(1000, until - Date.now()));
      if (!err) return this.logger.debug({ lease: where }, 'lease released');
      const ours = isConflict(err) ? await this.stillOurs() : true;
      if (!ours) return this.logger.debug({ lease: where }, 'lease not released: another installer holds it now');
      if (Date.now() >= until || !(isConflict(err) || isTransientApiError(err))) {
        const cause = (err as Error).message?.split('\n')[0];
        return this.logger.warn(
          { lease: where, cause },
          `could not release the lease; the next run takes it over once this process has ended, or ${LEASE_DURATION_SECONDS}s after its last renewal`,
        );
      }
    }
  }

  /** One delete, conditional on the version last seen: undefined when the Lease is gone, else the error. */
  private async deleteOnce(timeoutMs: number): Promise<unknown> {
    const body = { preconditions: { resourceVersion: this.lease.metadata?.resourceVersion } };
    try {
      await withCallTimeout(
        this.kube.coordination.deleteNamespacedLease({ name: this.name, namespace: this.namespace, body }),
        Math.min(5000, timeoutMs),
      );
      return undefined;
    } catch (err) {
      return isNotFound(err) ? undefined : err;
    }
  }

  /** Reads the Lease again; true (its new version kept) when it is still ours, or when it cannot be read (tried again). */
  private async stillOurs(): Promise<boolean> {
    const now = await withCallTimeout(
      this.kube.coordination.readNamespacedLease({ name: this.name, namespace: this.namespace }),
      3000,
    ).catch((err: unknown) => (isNotFound(err) ? null : undefined));
    if (now === undefined) return true;
    if (now?.spec?.holderIdentity !== this.identity) return false;
    this.lease = now;
    return true;
  }
}
