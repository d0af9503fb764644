/**
 * Runs one job at a time, at the earliest time anyone asked for: watch events, Git pushes, the
 * plan's wakeAt and retry delays all become `request(delayMs)`. Requests during a run are
 * remembered, so a change that lands mid-round is never lost; a burst of requests within the
 * debounce becomes one run.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  private inRun = false;
  private stopped = false;
  private rerun = Number.POSITIVE_INFINITY;

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
