/**
 * A node's drain (or its clean-up: a finished Job or reboot pod deleted) left running past the
 * end of its round. A round lasts as long as its slowest
 * lane, and the slowest is a drain: evictions the API server retries for seconds when several
 * of them update one PodDisruptionBudget at once. Everything else of the round would wait for
 * them. So a lane whose last step is its evictions hands them here and the round ends without
 * them; until they have all answered, the node is taken: a later round starts nothing on it
 * (executeActions skips its lane), so a node never has two rounds' calls in flight, and its
 * steps keep their order.
 */
export class InFlight {
  private readonly work = new Map<string, Promise<void>>();

  /**
   * `settled` is called each time a node's work has finished, with how long to wait before the
   * next round (0, or a refused eviction's retry delay).
   */
  constructor(private readonly settled: (retryInMs: number) => void = () => undefined) {}

  /** Whether a node's work from an earlier round is still running. */
  has(node: string): boolean {
    return this.work.has(node);
  }

  /** The nodes still taken. */
  nodes(): string[] {
    return [...this.work.keys()];
  }

  /** Takes `node` until `work` has finished; it resolves to the delay to pass to `settled`. */
  add(node: string, work: Promise<number>): void {
    let retryInMs = 0;
    const done = work.then(
      (ms) => void (retryInMs = ms),
      () => undefined,
    );
    this.work.set(node, done);
    void done.then(() => {
      if (this.work.get(node) === done) this.work.delete(node);
      this.settled(retryInMs);
    });
  }

  /** Resolves once everything taken so far has finished: shutdown waits for it, as for a round. */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work.values());
  }
}
