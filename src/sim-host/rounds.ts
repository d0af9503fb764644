/**
 * Rounds of a simulated actor (a host, the Machine Config Operator): one at a time, the next
 * one woken by a change or a timer, a wake-up that comes while one is queued folding into it,
 * and none after stop.
 */
export class Rounds {
  private stopped = false;
  private running: Promise<void> = Promise.resolve();
  private pending = false;
  private wake: NodeJS.Timeout | undefined;

  constructor(private readonly round: () => Promise<void>) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Runs a round in `delayMs` (replacing an earlier wake-up), unless one is queued already. */
  schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.wake !== undefined) clearTimeout(this.wake);
    this.wake = setTimeout(
      () => {
        this.wake = undefined;
        if (this.pending) return;
        this.pending = true;
        this.running = this.running.then(async () => {
          this.pending = false;
          await this.round();
        });
      },
      Math.max(0, delayMs),
    );
    this.wake.unref?.();
  }

  /** No round after this; `finished` waits for the one running. */
  stop(): void {
    this.stopped = true;
    if (this.wake !== undefined) clearTimeout(this.wake);
  }

  finished(): Promise<void> {
    return this.running.catch(() => undefined);
  }
}
