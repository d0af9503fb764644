/**
 * Work of a round left running past the round's end. A round lasts as long as its slowest lane,
 * and every node's next step waits for the round in progress to end: a node whose Job has just
 * completed would wait for a drain's evictions on another node, which the API server retries
 * for seconds when several of them update one PodDisruptionBudget at once. So a lane whose
 * steps change nothing the planner counts to start a node (lanes.ts laneOutlivesRound), or whose
 * last step is its evictions or a clean-up, is handed here and the round ends without it. Until
 * it has finished, its nodes are taken: a later round starts nothing on them (executeActions
 * skips their lanes), so a node never has two rounds' calls in flight, and its steps keep
 * their order. A node is given back only once the caches show what its work wrote: a round
 * takes the nodes still taken when it observes (executeActions' takenWhenObserved), so what it
 * plans on a node given back was observed with that work in it.
 */
import type { Written } from '../kube/written.js';
import type { ActionResult } from './classify.js';

/** What a piece of work left running came to. */
export interface Settled {
  /** How long to wait before the next round: 0, or a refused eviction's retry delay. */
  readonly retryInMs: number;
  /** The writes it made, seen by the caches (or given up on) before its nodes were given back. */
  readonly written: readonly Written[];
}

export class InFlight {
  private readonly work = new Map<string, Promise<void>>();
  /** Results of work finished since the last takeResults (the next round reports them). */
  private finished: ActionResult[] = [];

  /**
   * `settled` is called each time a piece of work has finished, after `seen` (none: nothing to
   * wait for) has resolved for its writes.
   */
  constructor(
    private readonly settled: (s: Settled) => void = () => undefined,
    private readonly seen?: (written: readonly Written[]) => Promise<unknown>,
  ) {}

  /** Whether a node's work from an earlier round is still running. */
  has(node: string): boolean {
    return this.work.has(node);
  }

  /** The nodes still taken. */
  nodes(): string[] {
    return [...this.work.keys()];
  }

  /**
   * Takes `nodes` until `work` has finished; it resolves to what it came to, and to the results
   * of its actions.
   */
  add(nodes: readonly string[], work: Promise<Settled & { readonly results?: readonly ActionResult[] }>): void {
    let settled: Settled = { retryInMs: 0, written: [] };
    const done = work.then(
      async (s) => {
        settled = { retryInMs: s.retryInMs, written: s.written };
        this.finished.push(...(s.results ?? []));
        if (this.seen !== undefined && s.written.length > 0) await this.seen(s.written);
      },
      () => undefined,
    );
    const taken = [...new Set(nodes)];
    for (const node of taken) this.work.set(node, done);
    void done.then(() => {
      for (const node of taken) if (this.work.get(node) === done) this.work.delete(node);
      this.settled(settled);
    });
  }

  /** The results of work finished since the last call, in the order it finished. */
  takeResults(): ActionResult[] {
    const out = this.finished;
    this.finished = [];
    return out;
  }

  /** Resolves once everything taken so far has finished: shutdown waits for it, as for a round. */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work.values());
  }
}
