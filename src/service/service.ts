/**
 * The drydock service: keeps watch-backed caches of the cluster, follows the Git source
 * (polling and webhook), and reconciles — observe → plan → execute → report — whenever
 * something changed, at the plan's wakeAt, or at the resync interval. Only the leader acts
 * and writes status; every replica observes and plans, so a takeover is immediate.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CloudProvider } from '../cloud/provider.js';
import type { DesiredState, LoadResult, Provider } from '../spec/model.js';
import { startClusterCache, type ClusterCache } from '../observe/cluster-cache.js';
import { cloneKubeConfig, type CountingKubeConfig } from '../observe/kube.js';
import { describeError } from '../observe/informer.js';
import { kubeApis } from '../execute/index.js';
import { kubeEventRecorder } from '../execute/events.js';
import { createMetrics, type ServiceMetrics } from './metrics.js';
import { startHttp, type HttpServer, type WebhookHandler } from './http.js';
import { alwaysLeader, DEFAULT_LEASE, startLeaderElection, type LeaderElector } from './leader.js';
import { reconcileOnce, roundError, type Planner, type ReconcileOutcome } from './reconciler.js';
import { Scheduler } from './scheduler.js';
import { shortRevision } from '../commit.js';
import { StatusPublisher } from './status-publisher.js';
import { startPolling, type Polling } from './polling.js';
import { buildStatus, type StatusInput, type StatusSink, type StatusSnapshot } from './status.js';

/** The newest commit of the tracked branch and what the loader made of it. */
export interface DesiredRevision {
  readonly commit: string;
  readonly load: LoadResult;
}

/** Where desired state comes from: a Git remote, or a directory (tests, `drydock plan`). */
export interface DesiredSource {
  /** Fetches if needed; resolves to the newest revision. Throws when the source is unreachable. */
  sync(): Promise<DesiredRevision>;
  /** A webhook route that calls `notify` when a push was received and verified. */
  webhook?: (notify: () => void) => WebhookHandler;
  close?(): Promise<void>;
}

export type { StatusSink } from './status.js';

export interface LeaderElectionConfig {
  readonly namespace: string;
  readonly name?: string;
  readonly identity?: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export interface ServiceOptions {
  readonly kubeConfig: CountingKubeConfig;
  readonly source: DesiredSource;
  readonly planner: Planner;
  /** Cloud providers by name. */
  readonly providers: Partial<Record<Provider, CloudProvider>>;
  readonly status?: StatusSink;
  readonly cluster: string;
  readonly logger: Logger;
  /** host:port for /healthz, /readyz, /metrics and the webhook; undefined: no HTTP. */
  readonly listen?: string;
  /** false: act without election (one replica only). */
  readonly leaderElection: LeaderElectionConfig | false;
  /** --poll-schedule: Git polling on this cron expression; wins over pollInterval. */
  readonly pollSchedule?: string;
  /** --interval: Git polling every this long (30s, 1m, 90s ...); wins over pollIntervalMs. */
  readonly pollInterval?: string;
  /** Polling on a plain timer, for intervals a cron step cannot express (embedding, tests). */
  readonly pollIntervalMs?: number;
  readonly debounceMs?: number;
  readonly settleMs?: number;
  readonly resyncMs?: number;
  /** Minimum time between two status writes (a trailing write always follows). */
  readonly statusIntervalMs?: number;
  /** A round running longer than this makes /healthz fail, so a hung call gets the pod restarted. */
  readonly stuckAfterMs?: number;
  /** How long stop() waits for the action in flight before releasing the Lease anyway. */
  readonly shutdownTimeoutMs?: number;
  readonly now?: () => Date;
  readonly metrics?: ServiceMetrics;
}

export interface ServiceState {
  readonly leading: boolean;
  readonly synced: boolean;
  readonly sourceCommit?: string;
  readonly newestCommit?: string;
  readonly rounds: number;
  readonly lastOutcome?: ReconcileOutcome;
  readonly lastStatus?: StatusSnapshot;
}

export interface Service {
  readonly url?: string;
  readonly metrics: ServiceMetrics;
  readonly identity: string;
  state(): ServiceState;
  /** Asks for a reconcile now (e.g. from a test). */
  poke(): void;
  /** Finishes the action in flight, releases the lease, stops everything. Idempotent. */
  stop(): Promise<void>;
}


export async function startService(opts: ServiceOptions): Promise<Service> {
  const log = opts.logger;
  const now = opts.now ?? (() => new Date());
  const metrics = opts.metrics ?? createMetrics();
  const pollIntervalMs = opts.pollIntervalMs ?? 60_000;
  const debounceMs = opts.debounceMs ?? 250;
  const settleMs = opts.settleMs ?? 250;
  const resyncMs = opts.resyncMs ?? 60_000;
  const statusIntervalMs = opts.statusIntervalMs ?? 2_000;
  const identity = opts.leaderElection && opts.leaderElection.identity ? opts.leaderElection.identity : `${os.hostname()}-${randomBytes(4).toString('hex')}`;

  opts.kubeConfig.onRequest((r) => metrics.apiRequests.inc({ client: 'cluster', verb: r.watch ? 'WATCH' : r.method }));

  let stopping = false;
  let rounds = 0;
  let newest: DesiredRevision | undefined;
  let inForce: { commit: string; desired: DesiredState } | undefined;
  let lastOutcome: ReconcileOutcome | undefined;
  let transientStreak = 0;
  let roundStartedAt: number | undefined;
  const stuckAfterMs = opts.stuckAfterMs ?? 5 * 60_000;

  const scheduler: Scheduler = new Scheduler(round);
  const cluster: ClusterCache = startClusterCache({
    kubeConfig: opts.kubeConfig,
    logger: log,
    onChange: () => scheduler.request(debounceMs),
    onError: (collection, err) => metrics.errors.inc({ kind: 'watch', code: String(describeError(err).code ?? collection) }),
  });

  let leader: LeaderElector;
  if (opts.leaderElection) {
    const le = opts.leaderElection;
    const leaseKc = cloneKubeConfig(opts.kubeConfig);
    leaseKc.onRequest((r) => metrics.apiRequests.inc({ client: 'lease', verb: r.method }));
    leader = startLeaderElection({
      kubeConfig: leaseKc,
      namespace: le.namespace,
      name: le.name ?? 'drydock',
      identity,
      leaseDurationMs: le.leaseDurationMs ?? DEFAULT_LEASE.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs ?? DEFAULT_LEASE.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs ?? DEFAULT_LEASE.retryPeriodMs,
      logger: log,
      onStartedLeading: () => {
        metrics.leader.set(1);
        publisher.forgetWritten();
        scheduler.request(0);
      },
      onStoppedLeading: () => metrics.leader.set(0),
      onSyncRequested: () => {
        log.info({}, 'sync requested by another replica');
        void syncSource();
      },
    });
  } else {
    leader = alwaysLeader(identity, () => {
      metrics.leader.set(1);
      scheduler.request(0);
    });
  }
  const mayAct = (): boolean => !stopping && leader.isLeader();
  const publisher = new StatusPublisher({
    ...(opts.status ? { sink: opts.status } : {}),
    logger: log,
    metrics,
    intervalMs: statusIntervalMs,
    clock: () => now().getTime(),
    mayWrite: mayAct,
    requestRound: (ms) => scheduler.request(ms),
  });

  const groupProvider = (groupId: string): CloudProvider | undefined => {
    const sg = inForce?.desired.scalingGroups.find((g) => g.groupId === groupId);
    if (sg) return opts.providers[sg.provider];
    const configured = Object.values(opts.providers).filter((p): p is CloudProvider => p !== undefined);
    return configured.length === 1 ? configured[0] : undefined;
  };
  const actionDeps = { kube: kubeApis(opts.kubeConfig), cloud: groupProvider, fieldManager: 'drydock' };
  const events = kubeEventRecorder(opts.kubeConfig, log, identity);

  async function syncSource(): Promise<void> {
    try {
      const rev = await opts.source.sync();
      metrics.markGitSync(now().getTime());
      if (rev.commit !== newest?.commit) {
        newest = rev;
        if (rev.load.ok) {
          inForce = { commit: rev.commit, desired: rev.load.desired };
          log.info({ commit: rev.commit, files: rev.load.files.length }, 'commit loaded');
        } else {
          metrics.errors.inc({ kind: 'stalled', code: 'InvalidCommit' });
          log.warn({ commit: rev.commit, errors: rev.load.errors.length, inForce: inForce?.commit }, 'commit refused; the last valid commit stays in force');
        }
        scheduler.request(0);
      }
    } catch (err) {
      metrics.errors.inc({ kind: 'git', code: String(describeError(err).code ?? 'sync') });
      log.warn({ err: describeError(err) }, 'git sync failed');
    }
  }

  async function report(input: Omit<StatusInput, 'cluster' | 'sourceCommit' | 'newestCommit' | 'loadErrors'>): Promise<void> {
    const snapshot = buildStatus({
      cluster: opts.cluster || inForce?.desired.config.cluster || '',
      ...(inForce ? { sourceCommit: inForce.commit } : {}),
      ...(newest ? { newestCommit: newest.commit } : {}),
      loadErrors: newest && !newest.load.ok ? newest.load.errors : [],
      ...input,
    });
    await publisher.publish(snapshot);
  }

  async function round(): Promise<void> {
    if (stopping) return;
    if (!cluster.isSynced()) return; // the synced() hook requests a round
    rounds += 1;
    roundStartedAt = now().getTime();
    const started = process.hrtime.bigint();
    let result = 'ok';
    try {
      if (!inForce) {
        await report({});
        scheduler.request(resyncMs);
        result = 'no-valid-commit';
        return;
      }
      const outcome = await reconcileOnce(inForce.desired, {
        cluster,
        providers: (p) => opts.providers[p],
        planner: opts.planner,
        actionDeps,
        events,
        logger: log,
        metrics,
        now,
        mayAct,
        settleMs,
        resyncMs,
      });
      lastOutcome = outcome;
      transientStreak = outcome.transientFailures > 0 ? transientStreak + 1 : 0;
      await report({ plan: outcome.plan, results: outcome.results, problems: outcome.observed.problems });
      const backoff = transientStreak > 0 ? Math.min(30_000, 500 * 2 ** Math.min(transientStreak, 6)) : 0;
      scheduler.request(Math.max(outcome.nextInMs, backoff));
    } catch (err) {
      result = 'error';
      const e = roundError(err);
      metrics.errors.inc({ kind: 'round', code: e.code });
      log.error({ code: e.code, err: describeError(err) }, 'reconcile failed');
      await report({ error: { code: e.code, message: e.message } }).catch(() => undefined);
      scheduler.request(e.retryInMs);
    } finally {
      roundStartedAt = undefined;
      metrics.reconcileDuration.observe({ result }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  let http: HttpServer | undefined;
  let polling: Polling | undefined;
  try {
    if (opts.listen !== undefined) {
      http = await startHttp({
        listen: opts.listen,
        logger: log,
        registry: metrics.registry,
        healthy: () => {
          if (stopping) return { ok: false, reason: 'shutting down' };
          // Requests to the API server have no deadline of their own; a round stuck on one
          // would stop the loop for good, so liveness fails and the pod is restarted.
          if (roundStartedAt !== undefined && now().getTime() - roundStartedAt > stuckAfterMs) {
            return { ok: false, reason: `a reconcile has been running for ${Math.round((now().getTime() - roundStartedAt) / 1000)}s` };
          }
          return { ok: true };
        },
        readiness: () => {
          const reasons: string[] = [];
          if (!cluster.isSynced()) reasons.push('cluster caches not synced');
          if (!inForce) reasons.push(newest ? `no valid commit yet (newest ${shortRevision(newest.commit)} was refused)` : 'no commit fetched yet');
          return { ready: reasons.length === 0, reasons };
        },
        ...(opts.source.webhook
          ? {
              webhook: opts.source.webhook(() => {
                void syncSource();
                // The webhook may land on a standby (a Service spreads requests): relay it.
                if (!leader.isLeader()) void leader.requestSync();
              }),
            }
          : {}),
      });
    }
  } catch (err) {
    await Promise.allSettled([cluster.stop(), leader.stop(), scheduler.stop()]);
    throw err;
  }

  void cluster.synced().then(() => {
    log.info({}, 'cluster caches synced');
    scheduler.request(0);
  });
  await syncSource();
  polling = startPolling({
    ...(opts.pollSchedule !== undefined ? { schedule: opts.pollSchedule } : {}),
    ...(opts.pollInterval !== undefined ? { interval: opts.pollInterval } : { intervalMs: pollIntervalMs }),
    tick: syncSource,
  });

  let stopped: Promise<void> | undefined;
  return {
    ...(http ? { url: http.url } : {}),
    metrics,
    identity,
    state: () => ({
      leading: leader.isLeader(),
      synced: cluster.isSynced(),
      ...(inForce ? { sourceCommit: inForce.commit } : {}),
      ...(newest ? { newestCommit: newest.commit } : {}),
      rounds,
      ...(lastOutcome ? { lastOutcome } : {}),
      ...(publisher.last ? { lastStatus: publisher.last } : {}),
    }),
    poke: () => scheduler.request(0),
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        await polling?.stop();
        log.info({}, 'shutting down: finishing the action in flight');
        let timer: NodeJS.Timeout | undefined;
        const gaveUp = await Promise.race([
          scheduler.stop().then(() => false),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(true), opts.shutdownTimeoutMs ?? 30_000);
          }),
        ]);
        clearTimeout(timer);
        if (gaveUp) log.warn({}, 'the action in flight did not finish in time; stopping without it');
        await leader.stop();
        await Promise.allSettled([cluster.stop(), http?.close(), opts.source.close?.()]);
        log.info({}, 'stopped');
      })();
      return stopped;
    },
  };
}
