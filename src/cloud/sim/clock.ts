/**
 * The simulated world's clock. The simulator never reads Date or setTimeout directly, so
 * tests can move time forward by hand and see boots and terminations happen exactly when due.
 */
export interface TimerHandle {
  cancel(): void;
}

export type TimerCallback = () => void | Promise<unknown>;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Runs `fn` once, `delayMs` from now. `fn` may return a promise of the work it started;
   * a manual clock waits for it, so a test sees the timer's whole effect.
   */
  setTimer(delayMs: number, fn: TimerCallback): TimerHandle;
  /** Resolves `ms` from now. */
  sleep(ms: number): Promise<void>;
}

/** Wall-clock time: the default outside tests. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(() => void fn(), Math.max(0, delayMs));
    // A pending boot must not keep a finished process alive.
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

interface PendingTimer {
  readonly at: number;
  readonly seq: number;
  readonly fn: TimerCallback;
}

/**
 * A clock that only moves when told to. Timers due at the same instant fire in the order they
 * were set, so a test run is the same every time.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: TimerCallback): TimerHandle {
    const timer: PendingTimer = { at: this.current + Math.max(0, delayMs), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(ms, resolve));
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way (including
   * timers those timers set), and lets the promises they settle run before returning.
   */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.current = next.at;
      await next.fn();
      await flushPromises();
    }
    this.current = target;
    await flushPromises();
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets queued promise callbacks (and the I/O they start) run. */
async function flushPromises(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
