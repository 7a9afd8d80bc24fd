// The Lease's pure parts: its name, who we are in it, and what to do with it as read
// (release-lease.ts holds it, lease-acquire.ts takes it).
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { V1Lease } from '@kubernetes/client-node';
import type { HolderVerdict } from './lease-holder.js';

/** How long a Lease stays valid without renewal; renewed every third of it. */
export const LEASE_DURATION_SECONDS = 15;

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
export function leaseState(
  spec: V1Lease['spec'],
  identity: string,
  now: number,
  unchangedSinceMs?: number,
): LeaseState {
  const holder = spec?.holderIdentity;
  if (!holder) return { kind: 'free' };
  if (holder === identity) return { kind: 'ours' };
  const duration = (spec?.leaseDurationSeconds ?? LEASE_DURATION_SECONDS) * 1000;
  const renewed = spec?.renewTime
    ? new Date(spec.renewTime).getTime()
    : spec?.acquireTime
      ? new Date(spec.acquireTime).getTime()
      : 0;
  const ago = now - renewed;
  const watched = unchangedSinceMs === undefined ? 0 : now - unchangedSinceMs;
  if (ago > duration || watched > duration)
    return { kind: 'expired', holder, renewedSecondsAgo: Math.round(ago / 1000) };
  return {
    kind: 'held',
    holder,
    renewedSecondsAgo: Math.max(0, Math.round(ago / 1000)),
    expiresInSeconds: Math.max(0, Math.round((duration - ago) / 1000)),
  };
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
  if (verdict?.kind === 'gone')
    return {
      action: 'take over',
      holder: state.holder,
      why: verdict.why,
      expired,
      renewedSecondsAgo: state.renewedSecondsAgo,
    };
  if (!expired) return { action: 'wait', holder: state.holder, why: verdict?.why };
  if (verdict?.kind === 'alive')
    return {
      action: 'wait',
      holder: state.holder,
      why: `it has not renewed its Lease for ${state.renewedSecondsAgo}s, but ${verdict.why}`,
    };
  return {
    action: 'take over',
    holder: state.holder,
    why: `it has not renewed its Lease for ${state.renewedSecondsAgo}s`,
    expired,
    renewedSecondsAgo: state.renewedSecondsAgo,
  };
}
