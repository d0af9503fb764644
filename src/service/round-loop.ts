/**
 * The service's round: reconcile the commit in force against the cluster, report what came
 * of it, and ask the scheduler for the next round — at the plan's wakeAt, after a retry delay,
 * or later while transient failures repeat (exponential backoff). It counts the rounds and
 * keeps the last outcome for state().
 */
import type { Logger } from 'pino';
import type { ClusterCache } from '../observe/cluster-cache.js';
import { describeError } from '../errors.js';
import type { DesiredState } from '../spec/model.js';
import type { Settled } from '../execute/in-flight.js';
import type { DesiredTracker } from './desired.js';
import type { RoundWatch } from './health.js';
import type { ServiceMetrics } from './metrics.js';
import { roundError, type ReconcileOutcome } from './reconciler.js';
import type { StatusInput } from './status.js';

/**
 * How long a round waits for the caches to show the writes of the round before it; past that
 * it plans on what they hold (a watch that restarted from a fresh list may never show them).
 */
export const SEEN_WITHIN_MS = 5000;

/**
 * What a round reports; the service adds the cluster and the commits, all but the commit a
 * round planned (sourceCommit), which is the one it read at its start.
 */
export type RoundReport = Omit<StatusInput, 'cluster' | 'newestCommit' | 'loadErrors' | 'loadWarnings'>;

export interface RoundLoopOptions {
  readonly cluster: ClusterCache;
  readonly desired: DesiredTracker;
  readonly reconcile: (desired: DesiredState) => Promise<ReconcileOutcome>;
  readonly report: (input: RoundReport) => Promise<void>;
  /** Asks the scheduler for a round in `ms`. */
  readonly request: (ms: number) => void;
  /** Asks the scheduler for a round as a watch event does: a gap after the last (scheduler.ts). */
  readonly requestSpaced: () => void;
  readonly watch: RoundWatch;
  readonly stopping: () => boolean;
  readonly metrics: ServiceMetrics;
  readonly logger: Logger;
  readonly resyncMs: number;
  /** How long a round waits to see the round before's writes (SEEN_WITHIN_MS unless given). */
  readonly seenWithinMs?: number;
}

/** Delay after `streak` consecutive rounds with transient failures: 1s, 2s, 4s ... capped at 30s. */
export function transientBackoffMs(streak: number): number {
  return streak > 0 ? Math.min(30_000, 500 * 2 ** Math.min(streak, 6)) : 0;
}

export class RoundLoop {
  private roundCount = 0;
  private last: ReconcileOutcome | undefined;
  private transientStreak = 0;
  /** Whether the caches have seen the last round's writes: resolves true once they have. */
  private lastWrites: Promise<boolean> | undefined;

  constructor(private readonly opts: RoundLoopOptions) {}

  get rounds(): number {
    return this.roundCount;
  }

  get lastOutcome(): ReconcileOutcome | undefined {
    return this.last;
  }

  /** One round; never throws (a failed round is reported and retried). */
  async run(): Promise<void> {
    const o = this.opts;
    if (o.stopping()) return;
    if (!o.cluster.isSynced()) return; // the synced() hook requests a round
    await this.untilWritesSeen();
    if (o.stopping()) return;
    this.roundCount += 1;
    o.watch.roundStarted();
    const started = process.hrtime.bigint();
    let result = 'ok';
    try {
      result = await this.reconcile();
    } catch (err) {
      result = 'error';
      const e = roundError(err);
      o.metrics.errors.inc({ kind: 'round', code: e.code });
      o.logger.error({ code: e.code, err: describeError(err) }, 'reconcile failed');
      await o.report({ error: { code: e.code, message: e.message } }).catch(() => undefined);
      o.request(e.retryInMs);
    } finally {
      o.watch.roundEnded();
      o.metrics.reconcileDuration.observe({ result }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private async reconcile(): Promise<string> {
    const o = this.opts;
    const inForce = o.desired.inForce;
    if (!inForce) {
      await o.report({});
      o.request(o.resyncMs);
      return 'no-valid-commit';
    }
    const outcome = await o.reconcile(inForce.desired);
    this.last = outcome;
    this.transientStreak = outcome.transientFailures > 0 ? this.transientStreak + 1 : 0;
    // Not awaited: the status commit goes out while the next rounds run (status-publisher.ts).
    // The commit this round planned: one loaded while it ran is reported by the round that plans it.
    void o
      .report({
        sourceCommit: inForce.commit,
        plan: outcome.plan,
        results: outcome.results,
        problems: outcome.observed.problems,
      })
      .catch((err: unknown) => o.logger.warn({ err: describeError(err) }, 'status not published'));
    o.request(Math.max(outcome.nextInMs, transientBackoffMs(this.transientStreak)));
    this.awaitWrites(outcome);
    return 'ok';
  }

  /**
   * A node moves on when its own write has been seen, not after a fixed settle time: once the
   * caches show every write of this round, the next round is asked for at once.
   */
  private awaitWrites(outcome: ReconcileOutcome): void {
    if (outcome.written.length === 0) return;
    const seen = this.opts.cluster.whenSeen(outcome.written, this.opts.seenWithinMs ?? SEEN_WITHIN_MS);
    this.lastWrites = seen;
    void seen.then((yes) => {
      if (yes) this.opts.request(0);
    });
  }

  /**
   * Work an earlier round left running has finished and the caches show its writes
   * (in-flight.ts): the next round comes as a watch event's would, so that twenty lanes
   * finishing one after another make a round per gap, not twenty; after a refused eviction, at
   * its retry delay.
   */
  settled(s: Settled): void {
    if (s.retryInMs > 0) this.opts.request(s.retryInMs);
    else this.opts.requestSpaced();
  }

  /**
   * Before planning, the caches hold what the round before wrote (or the wait ran out): a
   * round never plans on a node as it was before drydock's own patch to it.
   */
  private async untilWritesSeen(): Promise<void> {
    const pending = this.lastWrites;
    if (pending === undefined) return;
    this.lastWrites = undefined;
    if (!(await pending))
      this.opts.logger.info({}, 'writes of the last round not seen in time; planning on the caches as they are');
  }
}
