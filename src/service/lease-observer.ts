/**
 * What a candidate makes of each read of the Lease, with client-go's semantics: a holder that
 * has not renewed for the lease duration may be replaced, measured on the candidate's own
 * clock from when it last saw the record change (so clock skew between replicas does not
 * matter); and a change of the sync-request annotation is a standby asking the leader to sync
 * Git. The clock is injected.
 */
import type { V1Lease } from '@kubernetes/client-node';
import { ANNOTATIONS } from '../protocol/keys.js';

export interface LeaseReading {
  /** The Lease is ours, free, or its holder let it expire: this candidate may write it. */
  readonly mayTake: boolean;
  readonly ours: boolean;
  /** A standby asked for a Git sync since the last read (never on the first read: that is history). */
  readonly syncRequested: boolean;
}

export class LeaseObserver {
  private observed: { holder: string; renewTime: string; at: number } | undefined;
  private seenSyncRequest: string | undefined;
  private leaseRead = false;

  /** `clock`: milliseconds since the epoch; `defaultDurationSeconds` when the Lease names none. */
  constructor(
    private readonly identity: string,
    private readonly defaultDurationSeconds: number,
    private readonly clock: () => number,
  ) {}

  see(lease: V1Lease): LeaseReading {
    const request = lease.metadata?.annotations?.[ANNOTATIONS.syncRequested];
    const syncRequested = this.leaseRead && request !== this.seenSyncRequest && request !== undefined;
    this.seenSyncRequest = request;
    this.leaseRead = true;
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : '';
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, at: this.clock() };
    }
    const durationMs = (lease.spec?.leaseDurationSeconds ?? this.defaultDurationSeconds) * 1000;
    const ours = holder === this.identity;
    const heldByAnother = holder !== '' && !ours && this.observed.at + durationMs > this.clock();
    return { mayTake: !heldByAnother, ours, syncRequested };
  }
}
