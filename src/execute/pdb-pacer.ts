import { within } from '../time-limit.js';

/**
 * How long kube-apiserver waits before it retries an eviction whose PDB update conflicted with
 * another's (its EvictionsRetry backoff: 500 ms steps).
 */
const EVICTION_CONFLICT_RETRY_MS = 500;

/**
 * Evictions of pods under one PodDisruptionBudget, one at a time across every node's drain, but
 * never held longer than the API server would hold a conflicting one.
 *
 * Each eviction updates its PDB's status; two at once conflict, and the API server answers the
 * loser only after retrying it 500 ms later. A wave of drains over pods of one workload would
 * pay that on nearly every eviction. Here an eviction waits for the one before it on the same
 * PDB (all of its PDBs, for a pod under several) to have answered, which costs each eviction
 * only the call before it, while the queue is short. A long queue (twenty drains of one
 * workload at once) would cost its last evictions more than the retry they avoid: so no
 * eviction waits longer than that retry, `EVICTION_CONFLICT_RETRY_MS`, and after it goes
 * whether the one before has answered or not (measured both ways in docs/benchmarks/makespan.md).
 * Pods under no PDB, and evictions of other PDBs, are not held.
 *
 * One pacer serves the whole process: a drain may outlive its round (in-flight.ts), and the
 * next round's evictions of the same PDB queue behind it.
 */
export class EvictionPacer {
  private readonly tails = new Map<string, Promise<void>>();

  /** @param maxWaitMs the longest an eviction waits for the one before it (tests shorten it). */
  constructor(private readonly maxWaitMs = EVICTION_CONFLICT_RETRY_MS) {}

  /** Runs `call` once every earlier call on any of `pdbs` has answered, or `maxWaitMs` has passed. */
  async run<T>(pdbs: readonly string[], call: () => Promise<T>): Promise<T> {
    if (pdbs.length === 0) return call();
    const before = pdbs.map((k) => this.tails.get(k) ?? Promise.resolve());
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    for (const k of pdbs) this.tails.set(k, mine);
    try {
      await within(Promise.all(before), this.maxWaitMs);
      return await call();
    } finally {
      release();
      for (const k of pdbs) if (this.tails.get(k) === mine) this.tails.delete(k);
    }
  }

  /** PDBs with an eviction under way or waiting (for tests and shutdown). */
  get busy(): number {
    return this.tails.size;
  }
}
