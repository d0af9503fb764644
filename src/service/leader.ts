/**
 * Lease-based leader election (coordination.k8s.io/v1), with client-go's semantics: a
 * candidate takes the Lease when its holder has not renewed it for leaseDuration (measured on
 * the candidate's own clock, from when it last saw the record change, so clock skew between
 * replicas does not matter); the leader renews every retryPeriod, and stops acting as soon as
 * it has not managed to renew for renewDeadline. Writes use the Lease's resourceVersion, so
 * two candidates can never both win a round.
 */
import { CoordinationV1Api, PatchStrategy, setHeaderOptions, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { httpStatus } from '../execute/classify.js';
import { describeError } from '../observe/informer.js';
import { ANNOTATIONS } from '../protocol/keys.js';

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

/** A standby that receives a webhook bumps this annotation on the Lease; the leader sees it at its next renewal. */

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
  let leading = false;
  let lastRenew = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  // What we last saw of the lease, and when (our clock).
  let observed: { holder: string; renewTime: string; at: number } | undefined;
  let seenSyncRequest: string | undefined;
  let leaseRead = false;

  const leaseBody = (base: V1Lease | undefined, acquire: boolean, transitions: number): V1Lease => {
    const t = new V1MicroTime(now());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(base?.metadata ?? {}), name: opts.name, namespace: opts.namespace },
      spec: {
        holderIdentity: opts.identity,
        leaseDurationSeconds: secondsOf(opts.leaseDurationMs),
        acquireTime: acquire ? t : (base?.spec?.acquireTime ?? t),
        renewTime: t,
        leaseTransitions: transitions,
      },
    };
  };

  /**
   * A 409 on our write means the Lease changed since we read it — a standby's sync request,
   * or a rival's acquisition. Read again and decide on what is there now, so an annotation
   * never costs the leader its leadership.
   */
  async function tryAcquireOrRenew(): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const result = await tryOnce();
      if (result !== 'conflict') return result;
      if (attempt >= 3) return false;
    }
  }

  async function tryOnce(): Promise<boolean | 'conflict'> {
    let lease: V1Lease;
    try {
      lease = await api.readNamespacedLease({ name: opts.name, namespace: opts.namespace });
    } catch (err) {
      if (httpStatus(err) !== 404) throw err;
      try {
        await api.createNamespacedLease({ namespace: opts.namespace, body: leaseBody(undefined, true, 0) });
        return true;
      } catch (createErr) {
        if (httpStatus(createErr) === 409) return 'conflict';
        throw createErr;
      }
    }
    const request = lease.metadata?.annotations?.[ANNOTATIONS.syncRequested];
    if (request !== seenSyncRequest) {
      seenSyncRequest = request;
      // What the first read shows is history (from before this replica started), not a new request.
      if (leaseRead && leading && request !== undefined) opts.onSyncRequested?.();
    }
    leaseRead = true;
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).toISOString() : '';
    if (!observed || observed.holder !== holder || observed.renewTime !== renewTime) {
      observed = { holder, renewTime, at: now() };
    }
    const durationMs = (lease.spec?.leaseDurationSeconds ?? secondsOf(opts.leaseDurationMs)) * 1000;
    const ours = holder === opts.identity;
    if (holder !== '' && !ours && observed.at + durationMs > now()) return false;
    const transitions = (lease.spec?.leaseTransitions ?? 0) + (ours ? 0 : 1);
    try {
      await api.replaceNamespacedLease({ name: opts.name, namespace: opts.namespace, body: leaseBody(lease, !ours, transitions) });
      return true;
    } catch (err) {
      if (httpStatus(err) === 409) return 'conflict';
      throw err;
    }
  }

  function lose(why: string): void {
    if (!leading) return;
    leading = false;
    opts.logger.warn({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity, why }, 'leadership lost');
    opts.onStoppedLeading();
  }

  async function round(): Promise<void> {
    try {
      const ok = await tryAcquireOrRenew();
      if (stopped) return;
      if (ok) {
        lastRenew = now();
        if (!leading) {
          leading = true;
          opts.logger.info({ lease: `${opts.namespace}/${opts.name}`, identity: opts.identity }, 'leadership acquired');
          opts.onStartedLeading();
        }
      } else if (leading) {
        lose('another replica holds the lease');
      }
    } catch (err) {
      opts.logger.warn({ lease: `${opts.namespace}/${opts.name}`, err: describeError(err) }, 'lease renewal failed');
    }
    if (leading && now() - lastRenew >= opts.renewDeadlineMs) lose('could not renew within the renew deadline');
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = round().finally(schedule);
    }, opts.retryPeriodMs);
  }
  inFlight = round().finally(schedule);

  return {
    identity: opts.identity,
    requestSync: async () => {
      try {
        await api.patchNamespacedLease(
          {
            name: opts.name,
            namespace: opts.namespace,
            body: { metadata: { annotations: { [ANNOTATIONS.syncRequested]: `${new Date(now()).toISOString()} ${opts.identity}` } } },
          },
          setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
        );
      } catch (err) {
        opts.logger.warn({ lease: `${opts.namespace}/${opts.name}`, err: describeError(err) }, 'sync request not relayed to the leader');
      }
    },
    isLeader: () => leading && !stopped && now() - lastRenew < opts.renewDeadlineMs,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight.catch(() => undefined);
      if (!leading) return;
      leading = false;
      opts.onStoppedLeading();
      try {
        const lease = await api.readNamespacedLease({ name: opts.name, namespace: opts.namespace });
        if (lease.spec?.holderIdentity !== opts.identity) return;
        await api.replaceNamespacedLease({
          name: opts.name,
          namespace: opts.namespace,
          body: { ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime(now()) } },
        });
        opts.logger.info({ lease: `${opts.namespace}/${opts.name}` }, 'lease released');
      } catch (err) {
        opts.logger.warn({ lease: `${opts.namespace}/${opts.name}`, err: describeError(err) }, 'lease not released; it expires by itself');
      }
    },
  };
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
