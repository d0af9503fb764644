/**
 * The drydock service: keeps watch-backed caches of the cluster, follows the Git source
 * (polling and webhook), and reconciles — observe → plan → execute → report — whenever
 * something changed, at the plan's wakeAt, or at the resync interval. Only the leader acts
 * and writes status; every replica observes and plans, so a takeover is immediate.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { DesiredState } from '../spec/model.js';
import type { CloudProvider } from '../cloud/provider.js';
import type { Provider } from '../spec/model.js';
import { startClusterCache, type ClusterCache } from '../observe/cluster-cache.js';
import { cloneKubeConfig, type CountingKubeConfig } from '../observe/kube.js';
import { describeError } from '../errors.js';
import { InstanceSightings } from '../observe/cloud.js';
import { MetricSightings } from '../observe/metrics.js';
import { kubeApis } from '../execute/index.js';
import { kubeEventRecorder, type BackgroundEventRecorder } from '../execute/events.js';
import { InFlight } from '../execute/in-flight.js';
import { EvictionPacer } from '../execute/pdb-pacer.js';
import { createMetrics, type ServiceMetrics } from './metrics.js';
import { startHttp, type HttpServer } from './http.js';
import { alwaysLeader, DEFAULT_LEASE, startLeaderElection, type LeaderElector } from './leader.js';
import { reconcileOnce, type Planner, type ReconcileOutcome } from './reconciler.js';
import { Scheduler } from './scheduler.js';
import { StatusPublisher } from './status-publisher.js';
import { PublishedStatuses } from './published.js';
import { startPolling, type Polling } from './polling.js';
import { buildStatus, type StatusSink, type StatusSnapshot } from './status.js';
import { DesiredTracker, type DesiredSource } from './desired.js';
import { readiness, RoundWatch } from './health.js';
import { RoundLoop, SEEN_WITHIN_MS, type RoundReport } from './round-loop.js';
import { Notifier, type NotifierOptions } from '../notify/notifier.js';
import type { SpecStatus } from '../plan/types.js';
import { configMapSentLog, memorySentLog, type SentLog } from '../notify/sent-log.js';
import { ObservedPace } from './observed-pace.js';
import type { StatusVersion } from '../report/status-timings.js';
import { isGitSourceError } from '../source/errors.js';
import { within } from '../time-limit.js';

export type { DesiredRevision, DesiredSource } from './desired.js';
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
  /** Read before each round's plan (a fleet's status branches); it reports its own failures. */
  readonly prepareRound?: (desired: DesiredState) => Promise<void>;
  /** In a fleet: an unchanged status is written again after this long, as a sign of life. */
  readonly statusHeartbeatMs?: () => number | undefined;
  /** Cloud providers by name. */
  readonly providers: Partial<Record<Provider, CloudProvider>>;
  readonly status?: StatusSink;
  /**
   * The status branch's recent history (source/status-history.ts), read once at start: the
   * nodes it saw done are the forecast's first observations. None for a directory.
   */
  readonly statusHistory?: () => Promise<ReadonlyMap<string, readonly StatusVersion[]>>;
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
  /** Notifications (drydock.yaml's receivers): where their secrets and sent-log are. */
  readonly notify?: NotifyServiceOptions;
}

export interface NotifyServiceOptions {
  /** Namespace of the sent-log ConfigMap (drydock's own). */
  readonly namespace: string;
  /** --notify-secrets-dir: where receivers' urlFrom and secretFrom files are. */
  readonly secretsDir?: string;
  /** Replaces the ConfigMap (tests). */
  readonly sentLog?: SentLog;
  /** Backoff and time limits, shortened by tests. */
  readonly delivery?: Pick<
    NotifierOptions,
    'retries' | 'minBackoffMs' | 'maxBackoffMs' | 'attemptTimeoutMs' | 'queueLimit'
  >;
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
  const clock = (): number => now().getTime();
  const metrics = opts.metrics ?? createMetrics();
  const identity =
    opts.leaderElection && opts.leaderElection.identity
      ? opts.leaderElection.identity
      : `${os.hostname()}-${randomBytes(4).toString('hex')}`;
  opts.kubeConfig.onRequest((r) => metrics.apiRequests.inc({ client: 'cluster', verb: r.watch ? 'WATCH' : r.method }));
  const pace = await observedPace(opts);

  let stopping = false;
  const watch = new RoundWatch(clock, opts.stuckAfterMs ?? 5 * 60_000);
  const scheduler: Scheduler = new Scheduler(() => loop.run());
  const desired = new DesiredTracker({
    source: opts.source,
    logger: log,
    metrics,
    clock,
    onNewCommit: () => scheduler.request(0),
  });
  const cluster: ClusterCache = startClusterCache({
    kubeConfig: opts.kubeConfig,
    logger: log,
    onChange: () => scheduler.requestSpaced(opts.debounceMs ?? 250),
    onError: (collection, err) =>
      metrics.errors.inc({ kind: 'watch', code: String(describeError(err).code ?? collection) }),
  });
  // Time before this leadership is no time this drydock spent draining (a drain's timeout).
  let leadingSince: number | undefined;
  const leader = electLeader(opts, identity, metrics, {
    startedLeading: () => {
      leadingSince = clock();
      publisher.forgetWritten();
      published.forget();
      notifier.forget();
      scheduler.request(0);
    },
    syncRequested: () => void desired.sync(),
  });
  const mayAct = (): boolean => !stopping && leader.isLeader();
  // Work left running past its round asks for a round once it has answered (round-loop.ts).
  const inFlight = new InFlight(
    (s) => loop.settled(s),
    (written) => cluster.whenSeen(written, SEEN_WITHIN_MS),
  );
  // Events go out beside the rounds; only shutdown waits for them.
  const events = kubeEventRecorder(opts.kubeConfig, log, identity);
  // The notifications' history: what the status branch held before this leadership wrote to it.
  const notifier = createNotifier(opts, metrics, () => published.branchTip());
  const publisher = new StatusPublisher({
    onPublished: (snapshot, commit) =>
      notifier.observe({
        snapshot,
        config: desired.inForce?.desired.config.notifications,
        ...(opts.status?.branch !== undefined ? { branch: opts.status.branch } : {}),
        ...(commit !== undefined ? { commit } : {}),
      }),
    ...(opts.status ? { sink: opts.status } : {}),
    logger: log,
    metrics,
    intervalMs: opts.statusIntervalMs ?? 2_000,
    ...(opts.statusHeartbeatMs !== undefined ? { heartbeatMs: opts.statusHeartbeatMs } : {}),
    clock,
    mayWrite: () => mayAct() && published.mayWrite(),
    requestRound: (ms) => scheduler.request(ms),
    pace,
  });
  // A directory has no status branch: nothing is read, and the planner is given nothing.
  const readSpecs = opts.status?.readSpecs?.bind(opts.status);
  const published: PublishedStatuses = new PublishedStatuses({
    ...(readSpecs !== undefined ? { read: readSpecs } : {}),
    written: () => publisher.written,
    logger: log,
  });
  const loop = roundLoop(opts, {
    metrics,
    cluster,
    desired,
    watch,
    publisher,
    published,
    scheduler,
    mayAct,
    // A standby plans as the leader it would be if it took over now.
    actingSince: () => (leader.isLeader() ? (leadingSince ?? clock()) : clock()),
    stopping: () => stopping,
    inFlight,
    events,
    pace,
    notifier,
  });

  let http: HttpServer | undefined;
  try {
    http = await serveHttp(opts, metrics, { watch, cluster, desired, leader });
  } catch (err) {
    await Promise.allSettled([cluster.stop(), leader.stop(), scheduler.stop()]);
    throw err;
  }

  void cluster.synced().then(() => {
    log.info({}, 'cluster caches synced');
    scheduler.request(0);
  });
  await desired.sync();
  const polling: Polling = startPolling({
    ...(opts.pollSchedule !== undefined ? { schedule: opts.pollSchedule } : {}),
    ...(opts.pollInterval !== undefined
      ? { interval: opts.pollInterval }
      : { intervalMs: opts.pollIntervalMs ?? 60_000 }),
    tick: () => desired.sync(),
  });

  let stopped: Promise<void> | undefined;
  return {
    ...(http ? { url: http.url } : {}),
    metrics,
    identity,
    state: () => ({
      leading: leader.isLeader(),
      synced: cluster.isSynced(),
      ...desired.commits(),
      rounds: loop.rounds,
      ...(loop.lastOutcome ? { lastOutcome: loop.lastOutcome } : {}),
      ...(publisher.last ? { lastStatus: publisher.last } : {}),
    }),
    poke: () => scheduler.request(0),
    stop: () => {
      stopped ??= (async () => {
        stopping = true;
        await shutdown(opts, { watch, polling, scheduler, leader, cluster, http, publisher, inFlight, events });
        await notifier.stop();
      })();
      return stopped;
    },
  };
}

/** The notifier, its sent-log in a ConfigMap in drydock's namespace (in memory without one). */
function createNotifier(
  opts: ServiceOptions,
  metrics: ServiceMetrics,
  history: () => readonly SpecStatus[] | undefined,
): Notifier {
  const n = opts.notify;
  const namespace = n?.namespace ?? (opts.leaderElection ? opts.leaderElection.namespace : undefined);
  return new Notifier({
    logger: opts.logger,
    counter: metrics.notifications,
    sentLog: n?.sentLog ?? (namespace !== undefined ? configMapSentLog(opts.kubeConfig, namespace) : memorySentLog()),
    ...(n?.secretsDir !== undefined ? { secretsDir: n.secretsDir } : {}),
    ...n?.delivery,
    history,
  });
}

/** Lease-based election, or always leading (--leader-elect=false); the leader metric follows. */
function electLeader(
  opts: ServiceOptions,
  identity: string,
  metrics: ServiceMetrics,
  on: { startedLeading: () => void; syncRequested: () => void },
): LeaderElector {
  if (!opts.leaderElection) {
    return alwaysLeader(identity, () => {
      metrics.leader.set(1);
      on.startedLeading();
    });
  }
  const le = opts.leaderElection;
  const leaseKc = cloneKubeConfig(opts.kubeConfig);
  leaseKc.onRequest((r) => metrics.apiRequests.inc({ client: 'lease', verb: r.method }));
  return startLeaderElection({
    kubeConfig: leaseKc,
    namespace: le.namespace,
    name: le.name ?? 'drydock',
    identity,
    leaseDurationMs: le.leaseDurationMs ?? DEFAULT_LEASE.leaseDurationMs,
    renewDeadlineMs: le.renewDeadlineMs ?? DEFAULT_LEASE.renewDeadlineMs,
    retryPeriodMs: le.retryPeriodMs ?? DEFAULT_LEASE.retryPeriodMs,
    logger: opts.logger,
    onStartedLeading: () => {
      metrics.leader.set(1);
      on.startedLeading();
    },
    onStoppedLeading: () => metrics.leader.set(0),
    onSyncRequested: () => {
      opts.logger.info({}, 'sync requested by another replica');
      on.syncRequested();
    },
  });
}

/** /healthz, /readyz, /metrics and the webhook, when --listen is given. */
async function serveHttp(
  opts: ServiceOptions,
  metrics: ServiceMetrics,
  parts: { watch: RoundWatch; cluster: ClusterCache; desired: DesiredTracker; leader: LeaderElector },
): Promise<HttpServer | undefined> {
  if (opts.listen === undefined) return undefined;
  const { watch, cluster, desired, leader } = parts;
  const webhook = opts.source.webhook?.(() => {
    void desired.sync();
    // The webhook may land on a standby (a Service spreads requests): relay it.
    if (!leader.isLeader()) void leader.requestSync();
  });
  return startHttp({
    listen: opts.listen,
    logger: opts.logger,
    registry: metrics.registry,
    healthy: () => watch.liveness(),
    readiness: () =>
      readiness({
        synced: cluster.isSynced(),
        ...(desired.inForce ? { inForce: desired.inForce.commit } : {}),
        ...(desired.newest ? { newest: desired.newest.commit } : {}),
      }),
    ...(webhook ? { webhook } : {}),
  });
}

interface RoundParts {
  readonly metrics: ServiceMetrics;
  readonly cluster: ClusterCache;
  readonly desired: DesiredTracker;
  readonly watch: RoundWatch;
  readonly publisher: StatusPublisher;
  readonly published: PublishedStatuses;
  readonly scheduler: Scheduler;
  readonly mayAct: () => boolean;
  readonly actingSince: () => number;
  readonly stopping: () => boolean;
  readonly inFlight: InFlight;
  readonly events: BackgroundEventRecorder;
  readonly pace: ObservedPace;
  readonly notifier: Notifier;
}

/**
 * The nodes the status branch saw done, read once: a branch not written yet (a first start)
 * or one that cannot be read leaves the forecast on its defaults until this process sees nodes
 * done; it never stops the start.
 */
async function observedPace(opts: ServiceOptions): Promise<ObservedPace> {
  const pace = new ObservedPace();
  if (opts.statusHistory === undefined) return pace;
  try {
    pace.seed(await opts.statusHistory());
  } catch (err) {
    const level = isGitSourceError(err) ? 'debug' : 'warn';
    opts.logger[level]({ err: describeError(err) }, 'status history not read; the forecast uses default times');
  }
  return pace;
}

/** The delay after a round that changed something, before looking again. */
function settleMsOf(opts: ServiceOptions): number {
  return opts.settleMs ?? 250;
}

/** The round loop, wired to the cluster, the clouds, the planner and the status publisher. */
function roundLoop(opts: ServiceOptions, p: RoundParts): RoundLoop {
  const { desired, metrics } = p;
  const log = opts.logger;
  const now = opts.now ?? (() => new Date());
  const actionDeps = {
    kube: kubeApis(opts.kubeConfig),
    cloud: (groupId: string) => desired.providerOf(groupId, opts.providers),
    fieldManager: 'drydock',
    cachedNode: (name: string) => p.cluster.node(name),
  };
  const resyncMs = opts.resyncMs ?? 60_000;
  const settleMs = settleMsOf(opts);
  const providers = (provider: Provider): CloudProvider | undefined => opts.providers[provider];
  const sightings = new InstanceSightings();
  const metricSightings = new MetricSightings();
  const evictionPacer = new EvictionPacer(undefined, (pdb, evicted, ms) => p.cluster.whenPdbSettled(pdb, evicted, ms));
  const cluster = (): string => opts.cluster || desired.inForce?.desired.config.cluster || '';
  return new RoundLoop({
    cluster: p.cluster,
    desired,
    reconcile: (d) =>
      reconcileOnce(d, {
        cluster: p.cluster,
        providers,
        planner: opts.planner,
        observedNodes: () => p.pace.timings(),
        ...(opts.prepareRound ? { prepareRound: opts.prepareRound } : {}),
        beforeActing: (d, plan) => p.notifier.beforeActing(d.config.notifications, plan),
        actionDeps,
        events: p.events,
        logger: log,
        metrics,
        now,
        sightings,
        metricSightings,
        mayAct: p.mayAct,
        actingSince: p.actingSince,
        inFlight: p.inFlight,
        evictionPacer,
        published: () => p.published.forPlan(cluster(), p.mayAct()),
        settleMs,
        resyncMs,
      }),
    report: (input: RoundReport) =>
      p.publisher.publish(
        buildStatus({
          cluster: cluster(),
          ...desired.commits(),
          loadErrors: desired.newest && !desired.newest.load.ok ? desired.newest.load.errors : [],
          loadWarnings: desired.newest?.load.warnings ?? [],
          ...input,
          ...(p.publisher.last !== undefined ? { carried: p.publisher.last } : {}),
        }),
      ),
    request: (ms) => p.scheduler.request(ms),
    requestSpaced: () => p.scheduler.requestSpaced(opts.debounceMs ?? 250),
    watch: p.watch,
    stopping: p.stopping,
    metrics,
    logger: log,
    resyncMs,
  });
}

/** Stops polling, lets the action in flight finish (up to the shutdown timeout), hands back the Lease, closes the rest. */
async function shutdown(
  opts: ServiceOptions,
  p: {
    watch: RoundWatch;
    polling: Polling;
    scheduler: Scheduler;
    leader: LeaderElector;
    cluster: ClusterCache;
    http: HttpServer | undefined;
    publisher: StatusPublisher;
    inFlight: InFlight;
    events: BackgroundEventRecorder;
  },
): Promise<void> {
  const log = opts.logger;
  p.watch.shuttingDown();
  await p.polling.stop();
  log.info({}, 'shutting down: finishing the action in flight');
  const finished = await within(
    p.scheduler
      .stop()
      .then(() => p.inFlight.idle())
      .then(() => Promise.all([p.events.idle(), p.publisher.idle()])),
    opts.shutdownTimeoutMs ?? 30_000,
  );
  if (!finished) log.warn({}, 'the action in flight did not finish in time; stopping without it');
  await p.leader.stop();
  await Promise.allSettled([p.cluster.stop(), p.http?.close(), opts.source.close?.()]);
  log.info({}, 'stopped');
}
