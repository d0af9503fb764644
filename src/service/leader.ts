/**
 * Lease-based leader election (coordination.k8s.io/v1), with client-go's semantics: a
 * candidate takes the Lease when its holder has not renewed it for leaseDuration (measured on
 * the candidate's own clock, from when it last saw the record change, so clock skew between
 * replicas does not matter); the leader renews every retryPeriod, and stops acting as soon as
 * it has not managed to renew for renewDeadline. Writes use the Lease's resourceVersion, so
 * two candidates can never both win a round.
 */
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { httpStatus } from '../execute/classify.js';
import { describeError } from '../errors.js';
import { ANNOTATIONS } from '../protocol/keys.js';
import { LeaseObserver } from './lease-observer.js';

export interface LeaderElectionOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly logger: Logger;
  readonly onStartedLeading: () => void;
  /** Called at once when leadership is lost (or released). */
  readonly onStoppedLeading: () => void;
  /** Called on the leader when another replica asked for a Git sync (it received the webhook). */
  readonly onSyncRequested?: () => void;
  readonly now?: () => number;
}

export interface LeaderElector {
  /** True only while the lease is held and was renewed within renewDeadline. */
  isLeader(): boolean;
  readonly identity: string;
  /** Asks the leader (through the Lease) to sync Git now. */
  requestSync(): Promise<void>;
  /** Stops campaigning and, if leading, hands the lease back so another replica takes over at once. */
  stop(): Promise<void>;
}

export const DEFAULT_LEASE = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 } as const;

function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

export function startLeaderElection(opts: LeaderElectionOptions): LeaderElector {
  const api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
  const now = opts.now ?? Date.now;
  const lease = new LeaseClient(api, opts, now);
  const state = new Leadership(opts, now);
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  function schedule(): void {
    if (state.stopped) return;
    timer = setTimeout(() => {
      inFlight = state.round(() => lease.acquireOrRenew(() => state.leading)).finally(schedule);
    }, opts.retryPeriodMs);
  }
  inFlight = state.round(() => lease.acquireOrRenew(() => state.leading)).finally(schedule);

  return {
    identity: opts.identity,
    requestSync: () => lease.requestSync(),
    isLeader: () => state.isLeader(),
    stop: async () => {
      state.stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight.catch(() => undefined);
      if (!state.leading) return;
      state.leading = false;
      opts.onStoppedLeading();
      await lease.release();
    },
  };
}

/** Whether this replica leads: acquired, and renewed within the renew deadline. Exported for its tests. */
export class Leadership {
  leading = false;
  stopped = false;
  private lastRenew = 0;

  constructor(
    private readonly opts: LeaderElectionOptions,
    private readonly now: () => number,
  ) {}

  isLeader(): boolean {
    return this.leading && !this.stopped && this.now() - this.lastRenew < this.opts.renewDeadlineMs;
  }

  /** One campaign round: `attempt` resolves to whether the Lease is ours now. */
  async round(attempt: () => Promise<boolean>): Promise<void> {
    const { opts } = this;
    try {
      const ok = await attempt();
      if (this.stopped) return;
      if (ok) {
        this.lastRenew = this.now();
        if (!this.leading) {
          this.leading = true;
          opts.logger.info({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity }, 'leadership acquired');
          opts.onStartedLeading();
        }
      } else if (this.leading) {
        this.lose('another replica holds the lease');
      }
    } catch (err) {
      opts.logger.warn({ lease: `${opts.namespace}/${opts.name}`, err: describeError(err) }, 'lease renewal failed');
    }
    if (this.leading && this.now() - this.lastRenew >= opts.renewDeadlineMs)
      this.lose('could not renew within the renew deadline');
  }

  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.opts.logger.warn(
      { lease: `${this.opts.namespace}/${this.opts.name}`, identity: this.opts.identity, why },
      'leadership lost',
    );
    this.opts.onStoppedLeading();
  }
}

/** The Lease object's reads and writes; every write carries the resourceVersion it read. */
class LeaseClient {
  private readonly observer: LeaseObserver;
  private readonly ref: { name: string; namespace: string };

  constructor(
    private readonly api: CoordinationV1Api,
    private readonly opts: LeaderElectionOptions,
    private readonly now: () => number,
  ) {
    this.observer = new LeaseObserver(opts.identity, secondsOf(opts.leaseDurationMs), now);
    this.ref = { name: opts.name, namespace: opts.namespace };
  }

  /**
   * A 409 on our write means the Lease changed since we read it — a standby's sync request,
   * or a rival's acquisition. Read again and decide on what is there now, so an annotation
   * never costs the leader its leadership.
   */
  async acquireOrRenew(leading: () => boolean): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.tryOnce(leading);
      if (result !== 'conflict') return result;
      if (attempt >= 3) return false;
    }
  }

  private async tryOnce(leading: () => boolean): Promise<boolean | 'conflict'> {
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease(this.ref);
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      return this.write(() =>
        this.api.createNamespacedLease({ namespace: this.opts.namespace, body: this.body(undefined, true, 0) }),
      );
    }
    const seen = this.observer.see(lease);
    if (seen.syncRequested && leading()) this.opts.onSyncRequested?.();
    if (!seen.mayTake) return false;
    const transitions = (lease.spec?.leaseTransitions ?? 0) + (seen.ours ? 0 : 1);
    return this.write(() =>
      this.api.replaceNamespacedLease({ ...this.ref, body: this.body(lease, !seen.ours, transitions) }),
    );
  }

  private async write(call: () => Promise<V1Lease>): Promise<boolean | 'conflict'> {
    try {
      await call();
      return true;
    } catch (err) {
      if (httpStatus(err) === 409) return 'conflict';
      throw err;
    }
  }

  private body(base: V1Lease | undefined, acquire: boolean, transitions: number): V1Lease {
    const t = new V1MicroTime(this.now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(base?.metadata ?? {}), ...this.ref },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: secondsOf(this.opts.leaseDurationMs),
        acquireTime: acquire ? t : (base?.spec?.acquireTime ?? t),
        renewTime: t,
        leaseTransitions: transitions,
      },
    };
  }

  /** A standby that receives a webhook bumps an annotation on the Lease; the leader sees it at its next renewal. */
  async requestSync(): Promise<void> {
    try {
      await this.api.patchNamespacedLease(
        {
          ...this.ref,
          body: {
            metadata: {
              annotations: {
                [ANNOTATIONS.syncRequested]: `${new Date(this.now()).toISOString()} ${this.opts.identity}`,
              },
            },
          },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    } catch (err) {
      this.opts.logger.warn(
        { lease: `${this.opts.namespace}/${this.opts.name}`, err: describeError(err) },
        'sync request not relayed to the leader',
      );
    }
  }

  /** Hands the Lease back (expiring at once) so another replica takes over without waiting. */
  async release(): Promise<void> {
    const where = `${this.opts.namespace}/${this.opts.name}`;
    try {
      const lease = await this.api.readNamespacedLease(this.ref);
      if (lease.spec?.holderIdentity !== this.opts.identity) return;
      await this.api.replaceNamespacedLease({
        ...this.ref,
        body: {
          ...lease,
          spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime(this.now()) },
        },
      });
      this.opts.logger.info({ lease: where }, 'lease released');
    } catch (err) {
      this.opts.logger.warn({ lease: where, err: describeError(err) }, 'lease not released; it expires by itself');
    }
  }
}

/** Leadership without election (--leader-elect=false): always leading. */
export function alwaysLeader(identity: string, onStartedLeading: () => void): LeaderElector {
  queueMicrotask(onStartedLeading);
  let stopped = false;
  return {
    identity,
    isLeader: () => !stopped,
    requestSync: async () => {},
    stop: async () => {
      stopped = true;
    },
  };
}
