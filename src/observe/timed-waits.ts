/**
 * Callers waiting for something the watch caches will show, each until its owner says it has
 * come (true) or its time is up (false). SeenWrites waits for drydock's own writes, the PDB
 * waiters for a PDB's controller to catch up; both check their waits again at each change.
 */
interface Wait<T> {
  readonly what: T;
  readonly resolve: (came: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

export class TimedWaits<T> {
  private readonly waits = new Set<Wait<T>>();

  /** How many waits are open. */
  get size(): number {
    return this.waits.size;
  }

  /** Waits for `what` until endWhere says it has come, or `timeoutMs` has passed (false). */
  wait(what: T, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const w: Wait<T> = { what, resolve, timer: setTimeout(() => this.end(w, false), Math.max(0, timeoutMs)) };
      w.timer.unref?.();
      this.waits.add(w);
    });
  }

  /** Ends, true, each open wait whose `what` has come; `came` is called once per open wait. */
  endWhere(came: (what: T) => boolean): void {
    for (const w of this.waits) if (came(w.what)) this.end(w, true);
  }

  /** Ends every open wait, false (the caches stop). */
  stop(): void {
    for (const w of this.waits) this.end(w, false);
  }

  private end(w: Wait<T>, came: boolean): void {
    if (!this.waits.delete(w)) return;
    clearTimeout(w.timer);
    w.resolve(came);
  }
}
