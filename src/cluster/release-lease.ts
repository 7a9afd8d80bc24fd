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
import { isConflict, isNotFound, withCallTimeout } from './kube-errors.js';
import type { KubeClients } from './kube-client.js';
import { acquireLease, microNow, type AcquireOptions } from './lease-acquire.js';
import { LEASE_DURATION_SECONDS } from './lease-decision.js';

/** Renewed every third of the Lease's duration. */
const RENEW_EVERY_MS = (LEASE_DURATION_SECONDS * 1000) / 3;

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

  /** Takes the release's Lease, waiting for another installer up to --lock-timeout (lease-acquire.ts). */
  static async acquire(kube: KubeClients, o: AcquireOptions): Promise<ReleaseLease> {
    const { lease, identity } = await acquireLease(kube, o);
    return new ReleaseLease(kube, lease, identity, o.namespace, o.logger).startRenewing();
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
