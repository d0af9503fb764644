/**
 * A stream of watch events keeps runs this many times as far apart as the last run took, so
 * runs fill at most a tenth of the time however fast events come, within the gap the caller
 * allows at most (the service's 250 ms) and SPACED_MIN_MS at least.
 */
export const SPACED_RUN_FACTOR = 9;
export const SPACED_MIN_MS = 20;

/**
 * Runs one job at a time, at the earliest time anyone asked for: Git pushes, the plan's wakeAt
 * and retry delays become `request(delayMs)`, watch events `requestSpaced(maxGapMs)`. Requests
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
  /** How long the last run took. */
  private lastRunMs = 0;
  /** The largest gap a spaced request made during the run allows (none: infinity). */
  private spacedInRun = Number.POSITIVE_INFINITY;

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
   * Asks for a run no sooner than a gap after the last one ended: a watch event after a quiet
   * spell runs at once, while a stream of them still makes at most one run per gap. The gap is
   * SPACED_RUN_FACTOR times what the last run took, between SPACED_MIN_MS and `maxGapMs`: cheap
   * rounds (a small cluster, nothing to do) follow events closely, costly ones (thousands of
   * nodes) keep to `maxGapMs`. During a run it is served a gap after that run ends.
   */
  requestSpaced(maxGapMs: number): void {
    if (this.inRun) {
      this.spacedInRun = Math.min(this.spacedInRun, maxGapMs);
      return;
    }
    const gap = Math.min(maxGapMs, Math.max(SPACED_MIN_MS, SPACED_RUN_FACTOR * this.lastRunMs));
    this.request(Math.max(0, this.lastEnd + gap - this.now()));
  }

  /** When the next run is due (epoch ms on the scheduler's clock), if one is. */
  get nextAt(): number | undefined {
    return Number.isFinite(this.dueAt) ? this.dueAt : undefined;
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
    const began = this.now();
    this.running = (async () => this.job())().catch(() => undefined);
    await this.running;
    this.running = undefined;
    this.inRun = false;
    this.lastEnd = this.now();
    this.lastRunMs = this.lastEnd - began;
    const again = this.rerun;
    this.rerun = Number.POSITIVE_INFINITY;
    const spaced = this.spacedInRun;
    this.spacedInRun = Number.POSITIVE_INFINITY;
    if (Number.isFinite(again)) this.request(again - this.now());
    if (Number.isFinite(spaced)) this.requestSpaced(spaced);
  }

  /** No new runs; resolves when the one in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
