/**
 * The notifier: the leader hands it every status it published, with the status branch's commit;
 * it works out the events not sent yet (events.ts, against the sent-log) and queues one message
 * per receiver that wants each. Delivery runs in the background, one queue per receiver, so a
 * receiver that is down or hangs holds up only its own messages, never a round or another
 * receiver. A full queue drops its oldest message, with a metric and a log.
 */
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { NotificationsConfig, NotifyReceiver } from '../spec/model.js';
import type { SpecStatus } from '../plan/types.js';
import { describeError } from '../errors.js';
import {
  branchEventIds,
  eventIds,
  newEvents,
  snapshotEvents,
  type NotifiedStatus,
  type NotifyEvent,
} from './events.js';
import { payloadFor, statusLink, type StatusLink } from './payloads.js';
import { deliver, type DeliveryOptions } from './delivery.js';
import { boundIds, type SentLog } from './sent-log.js';
import { DEFAULT_SECRETS_DIR } from './secrets.js';

export interface NotifierOptions {
  readonly logger: Logger;
  /** drydock_notifications_total{receiver, outcome}: sent, retried, failed, dropped. */
  readonly counter: Counter<'receiver' | 'outcome'>;
  readonly sentLog: SentLog;
  readonly secretsDir?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Messages waiting per receiver before the oldest is dropped (default 100). */
  readonly queueLimit?: number;
  readonly retries?: number;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly attemptTimeoutMs?: number;
  readonly fetch?: typeof fetch;
  /**
   * The spec statuses the status branch held before this leadership wrote to it, once read:
   * with no sent-log yet, what they show is history. Without it (no status branch, or not read
   * yet) the history is the status before the round (beforeActing) or the first one written.
   */
  readonly history?: () => readonly SpecStatus[] | undefined;
}

interface Job {
  readonly receiver: NotifyReceiver;
  readonly event: NotifyEvent;
  readonly body: string;
}

/** What the publisher hands over: the snapshot, drydock.yaml's notifications, and where the status went. */
export interface Published {
  readonly snapshot: NotifiedStatus;
  readonly config: NotificationsConfig | undefined;
  readonly branch?: string;
  readonly commit?: string;
}

export class Notifier {
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Map<string, Promise<void>>();
  /** Per event id, the receivers whose delivery has not ended yet. */
  private readonly open = new Map<string, Set<string>>();
  /** The sent-log as loaded and extended; undefined until loaded. */
  private sent: string[] | undefined;
  private shown = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private saving: Promise<void> = Promise.resolve();
  private readonly abort = new AbortController();
  private readonly delivery: DeliveryOptions;

  constructor(private readonly opts: NotifierOptions) {
    this.delivery = {
      secretsDir: opts.secretsDir ?? DEFAULT_SECRETS_DIR,
      env: opts.env ?? process.env,
      retries: opts.retries ?? 6,
      minBackoffMs: opts.minBackoffMs ?? 1_000,
      maxBackoffMs: opts.maxBackoffMs ?? 30_000,
      attemptTimeoutMs: opts.attemptTimeoutMs ?? 10_000,
      signal: this.abort.signal,
      fetch: opts.fetch ?? fetch,
    };
  }

  /** Never waits for a delivery: the events are worked out and queued behind the caller's back. */
  observe(p: Published): void {
    this.chain = this.chain
      .then(() => this.handle(p))
      .catch((err: unknown) => this.opts.logger.warn({ err: describeError(err) }, 'notifications not worked out'));
  }

  /**
   * Called by a round about to act, with its plan. With no sent-log yet, the history (what the
   * status branch held before this leadership wrote to it, else what the plan shows) is
   * written to the sent-log before the round acts: an event the actions cause is then news to
   * whichever leader sees it first, even one that follows a kill before any status was
   * written. Taking history from the first status written instead would lose the events of
   * every round that acted before it, a rollout's start among them. A sent-log that cannot be
   * read or written is logged and the round goes on: notifications never hold up a rollout.
   */
  async beforeActing(
    config: NotificationsConfig | undefined,
    plan: Pick<NotifiedStatus, 'specs' | 'waits'>,
  ): Promise<void> {
    this.chain = this.chain
      .then(() => this.startLog(config, plan))
      .catch((err: unknown) => this.opts.logger.warn({ err: describeError(err) }, 'notification sent-log not started'));
    await this.chain;
  }

  /** A new leadership reads the sent-log again: another leader may have written it since. */
  forget(): void {
    this.chain = this.chain.then(() => {
      this.sent = undefined;
    });
  }

  /** Resolves once every observed status was worked out and every queue is empty (tests). */
  async idle(): Promise<void> {
    for (;;) {
      await this.chain;
      const busy = [...this.running.values()];
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    await this.saving;
  }

  /** Gives up what is queued or in flight: the sent-log lacks it, so the next leader sends it. */
  async stop(): Promise<void> {
    this.abort.abort();
    for (const q of this.queues.values()) q.length = 0;
    await Promise.allSettled([this.chain, ...this.running.values()]);
    await this.saving;
  }

  private async startLog(
    config: NotificationsConfig | undefined,
    plan: Pick<NotifiedStatus, 'specs' | 'waits'>,
  ): Promise<void> {
    if (this.abort.signal.aborted || this.sent !== undefined) return;
    if (config === undefined || config.receivers.length === 0) return;
    const loaded = await this.opts.sentLog.load();
    if (loaded !== undefined) {
      this.sent = loaded;
      return;
    }
    const branch = this.opts.history?.();
    this.sent = branch !== undefined ? branchEventIds(branch) : eventIds(plan);
    this.opts.logger.info({ events: this.sent.length }, 'notifications start from the status before this round acts');
    this.save();
    await this.saving;
  }

  private async handle(p: Published): Promise<void> {
    if (this.abort.signal.aborted) return;
    // Nothing is read or written for a repository that names no receiver.
    if (p.config === undefined || p.config.receivers.length === 0) return;
    const all = snapshotEvents(p.snapshot);
    this.shown = new Set(all.map((e) => e.id));
    if (this.sent === undefined) {
      const loaded = await this.opts.sentLog.load();
      if (loaded === undefined) {
        // No log yet (notifications just turned on, and no round acted since: one that acts
        // starts the log first, beforeActing): what the branch held before this leadership
        // wrote (else what this status shows) is history, not news; recorded so that only
        // what happens from then on is sent.
        const branch = this.opts.history?.();
        this.sent = branch !== undefined ? branchEventIds(branch) : all.map((e) => e.id);
        this.opts.logger.info({ events: this.sent.length }, 'notifications start from the current status');
        this.save();
      } else this.sent = loaded;
    }
    const known = new Set([...this.sent, ...this.open.keys()]);
    const link = statusLink(p.config.commitUrl, p.branch, p.commit);
    for (const e of newEvents(p.snapshot, known)) this.enqueue(e, p.config.receivers, link);
  }

  private enqueue(e: NotifyEvent, receivers: readonly NotifyReceiver[], link: StatusLink): void {
    const wanting = receivers.filter((r) => r.events.includes(e.type));
    if (wanting.length === 0) {
      this.done(e.id);
      return;
    }
    this.open.set(e.id, new Set(wanting.map((r) => r.name)));
    for (const r of wanting) {
      const q = this.queues.get(r.name) ?? [];
      this.queues.set(r.name, q);
      q.push({ receiver: r, event: e, body: JSON.stringify(payloadFor(r.type, e, link)) });
      const limit = this.opts.queueLimit ?? 100;
      while (q.length > limit) {
        const dropped = q.shift();
        if (!dropped) break;
        this.opts.counter.inc({ receiver: r.name, outcome: 'dropped' });
        this.opts.logger.warn(
          { receiver: r.name, event: dropped.event.type, eventId: dropped.event.id, queueLimit: limit },
          'notification queue full; oldest message dropped',
        );
        this.ended(dropped);
      }
      if (!this.running.has(r.name)) {
        this.running.set(
          r.name,
          this.drain(r.name).finally(() => this.running.delete(r.name)),
        );
      }
    }
  }

  /** Sends a receiver's queue, oldest first, one message at a time. */
  private async drain(name: string): Promise<void> {
    const q = this.queues.get(name) ?? [];
    for (let job = q.shift(); job !== undefined && !this.abort.signal.aborted; job = q.shift()) {
      const fields = { receiver: name, event: job.event.type, eventId: job.event.id, spec: job.event.spec };
      try {
        await deliver(job.receiver, job.event.id, job.body, this.delivery, (reason, attempt) => {
          this.opts.counter.inc({ receiver: name, outcome: 'retried' });
          this.opts.logger.info({ ...fields, reason, attempt }, 'notification not delivered; retrying');
        });
        this.opts.counter.inc({ receiver: name, outcome: 'sent' });
        this.opts.logger.info(fields, 'notification sent');
      } catch (err) {
        if (this.abort.signal.aborted) return;
        this.opts.counter.inc({ receiver: name, outcome: 'failed' });
        this.opts.logger.warn({ ...fields, reason: (err as Error).message }, 'notification given up');
      }
      this.ended(job);
    }
  }

  /** A receiver's delivery of an event ended (sent, given up or dropped). */
  private ended(job: Job): void {
    const waiting = this.open.get(job.event.id);
    waiting?.delete(job.receiver.name);
    if (waiting && waiting.size === 0) this.done(job.event.id);
  }

  private done(id: string): void {
    this.open.delete(id);
    if (this.sent === undefined) return;
    this.sent = boundIds([...this.sent, id], this.shown);
    this.save();
  }

  /** One save at a time, each of the newest list; a failed save is tried again with the next. */
  private save(): void {
    this.saving = this.saving.then(async () => {
      if (this.sent === undefined) return;
      try {
        await this.opts.sentLog.save(this.sent);
      } catch (err) {
        this.opts.logger.warn({ err: describeError(err) }, 'notification sent-log not saved; retrying with the next');
      }
    });
  }
}
