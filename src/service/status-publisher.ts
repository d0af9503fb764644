/**
 * Publishing the service's status: every snapshot is logged once when it changes, and written
 * to the status sink by the leader, at most once per `intervalMs` (a change inside that gap is
 * written by a later round: the publisher asks for one) and never twice the same, one write
 * at a time. The round loop does not wait for a write (a status commit and push took 0.5–2.6 s
 * on a loaded machine, and every round behind it waited that long); the service waits for the
 * one under way before it gives up the lease. The clock is injected, like the service's.
 */
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import type { ServiceMetrics } from './metrics.js';
import type { ObservedPace } from './observed-pace.js';
import { statusKey, type StatusSink, type StatusSnapshot } from './status.js';

export interface StatusPublisherOptions {
  readonly sink?: StatusSink;
  readonly logger: Logger;
  readonly metrics: ServiceMetrics;
  readonly intervalMs: number;
  /** Milliseconds since the epoch. */
  readonly clock: () => number;
  /** Whether this replica may write (it leads, and is not stopping). */
  readonly mayWrite: () => boolean;
  /** Asks the service for another round in `ms`. */
  readonly requestRound: (ms: number) => void;
  /**
   * Hears every snapshot this leader published: after its status commit (with the commit id),
   * or at once when there is no status sink. Must not wait on anything (the notifier queues).
   */
  readonly onPublished?: (snapshot: StatusSnapshot, commit: string | undefined) => void;
  /** Reads every published status for the nodes it sees done (a standby's too: it may lead next). */
  readonly pace?: ObservedPace;
  /** The same snapshot is written again after this long (a fleet's sign of life); default never. */
  readonly heartbeatMs?: () => number | undefined;
}

export class StatusPublisher {
  private lastSnapshot: StatusSnapshot | undefined;
  /** The last snapshot the sink took in this leadership: what the status branch holds. */
  private writtenSnapshot: StatusSnapshot | undefined;
  private writtenKey: string | undefined;
  private loggedKey: string | undefined;
  private lastWriteAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: StatusPublisherOptions) {}

  /** The last snapshot published (written or not). */
  get last(): StatusSnapshot | undefined {
    return this.lastSnapshot;
  }

  /** The last snapshot written to the status sink in this leadership (none without a sink). */
  get written(): StatusSnapshot | undefined {
    return this.writtenSnapshot;
  }

  /**
   * A new leader writes its first snapshot even if an earlier leadership wrote the same, and
   * no longer knows what the branch holds (another replica may have written since).
   */
  forgetWritten(): void {
    this.writtenKey = undefined;
    this.writtenSnapshot = undefined;
  }

  /** Status writes failed in a row (for the backoff). */
  private failures = 0;
  /** The write under way, if any. */
  private inFlight: Promise<void> | undefined;

  async publish(snapshot: StatusSnapshot): Promise<void> {
    this.lastSnapshot = snapshot;
    this.opts.pace?.record(snapshot.specs, new Date(this.opts.clock()).toISOString());
    const key = statusKey(snapshot);
    if (key !== this.loggedKey) {
      this.loggedKey = key;
      this.logChange(snapshot);
    }
    const { sink } = this.opts;
    // No cluster name yet (no --cluster, no valid commit loaded): the report would be filed
    // under the wrong name, so it waits for the first valid commit.
    if (!sink) {
      if (this.opts.mayWrite() && key !== this.writtenKey) {
        this.writtenKey = key;
        this.opts.onPublished?.(snapshot, undefined);
      }
      return;
    }
    if (!this.opts.mayWrite() || snapshot.cluster === '') return;
    const beat = this.opts.heartbeatMs?.();
    if (key === this.writtenKey && (beat === undefined || this.opts.clock() - this.lastWriteAt < beat)) return;
    if (this.inFlight !== undefined) {
      // One write at a time: the round after this one's interval writes what is newest then.
      this.opts.requestRound(this.opts.intervalMs);
      return;
    }
    const wait = this.lastWriteAt + this.opts.intervalMs - this.opts.clock();
    if (wait > 0) {
      // Too soon after the last write: a later round writes it (trailing write).
      this.opts.requestRound(wait);
      return;
    }
    this.inFlight = this.write(sink, snapshot, key).finally(() => {
      this.inFlight = undefined;
    });
    await this.inFlight;
  }

  /** Resolves once no status write is under way (the service waits for it before giving up the lease). */
  async idle(): Promise<void> {
    await this.inFlight;
  }

  private async write(sink: StatusSink, snapshot: StatusSnapshot, key: string): Promise<void> {
    try {
      const commit = await sink.write(snapshot);
      this.writtenKey = key;
      this.writtenSnapshot = snapshot;
      this.opts.onPublished?.(snapshot, typeof commit === 'string' ? commit : undefined);
      this.lastWriteAt = this.opts.clock();
      this.failures = 0;
      const beat = this.opts.heartbeatMs?.();
      if (beat !== undefined) this.opts.requestRound(beat);
    } catch (err) {
      // A write that fails has already spent its own retries inside the round; the next ones
      // wait longer each time (5 s doubling to 1 min), so a Git host that refuses status
      // pushes for minutes slows the rounds in between not at all.
      this.failures += 1;
      const backoff = Math.min(60_000, 5_000 * 2 ** (this.failures - 1));
      this.lastWriteAt = this.opts.clock() + backoff - this.opts.intervalMs;
      this.opts.metrics.errors.inc({ kind: 'status', code: String(describeError(err).code ?? 'write') });
      this.opts.logger.warn(
        { err: describeError(err), retryInSeconds: backoff / 1000 },
        'status not written; retrying later',
      );
      this.opts.requestRound(backoff);
    }
  }

  private logChange(snapshot: StatusSnapshot): void {
    this.opts.logger.info(
      {
        sourceCommit: snapshot.sourceCommit,
        specs: snapshot.specs.map((s) => ({
          spec: `${s.spec.kind}/${s.spec.name}`,
          phase: s.phase,
          done: s.progress.done,
          total: s.progress.total,
          waitingFor: s.waitingFor,
        })),
        waits: snapshot.waits.map((w) => ({
          code: w.code,
          spec: `${w.spec.kind}/${w.spec.name}`,
          node: w.node,
          reason: w.reason,
        })),
        loadErrors: snapshot.loadErrors.length,
      },
      'status changed',
    );
  }
}
