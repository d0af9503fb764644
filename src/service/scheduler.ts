/**
 * Runs one job at a time, at the earliest time anyone asked for: Git pushes, the plan's wakeAt
 * and retry delays become `request(delayMs)`, watch events `requestSpaced(gapMs)`. Requests
 * during a run are remembered, so a change that lands mid-round is never lost; a burst of
 * requests becomes one run, or two for spaced ones (one at once, one a gap later).
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private inRun = false;
  private stopped = false;
  private rerun = Number.POSITIVE_INFINITY;
  /** When the last run ended (never: long ago). */
  private lastEnd = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Asks for a run in `delayMs` (or earlier if already due earlier). */
  request(delayMs: number): void {
    if (this.stopped) return;
    const at = this.now() + Math.max(0, delayMs);
    if (this.inRun) {
      this.rerun = Math.min(this.rerun, at);
      return;
    }
    if (at >= this.dueAt) return;
    this.dueAt = at;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fire(), Math.max(0, at - this.now()));
  }

  /**
   * Asks for a run no sooner than `gapMs` after the last one ended: a watch event after a quiet
   * spell runs at once, while a stream of them still makes at most one run per gap (what a
   * fixed delay after each event bounded too, at the cost of that delay on every event). During
   * a run it is a request in `gapMs`, as before.
   */
  requestSpaced(gapMs: number): void {
    if (this.inRun) {
      this.request(gapMs);
      return;
    }
    const now = this.now();
    this.request(Math.max(0, this.lastEnd + gapMs - now));
  }

  /** Whether a run is in progress. */
  get busy(): boolean {
    return this.inRun;
  }

  private async fire(): Promise<void> {
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    if (this.stopped) return;
    // Flag first: the job may call request() before its first await.
    this.inRun = true;
    this.running = (async () => this.job())().catch(() => undefined);
    await this.running;
    this.running = undefined;
    this.inRun = false;
    this.lastEnd = this.now();
    const again = this.rerun;
    this.rerun = Number.POSITIVE_INFINITY;
    if (Number.isFinite(again)) this.request(again - this.now());
  }

  /** No new runs; resolves when the one in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
