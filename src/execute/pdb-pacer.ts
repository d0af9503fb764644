import { within } from '../time-limit.js';

/**
 * How long kube-apiserver waits before it retries an eviction whose PDB update conflicted with
 * another's (its EvictionsRetry backoff: 500 ms steps).
 */
const EVICTION_CONFLICT_RETRY_MS = 500;

/** How long an evicted pod's uid is kept: ample for its deletion to reach the caches. */
const EVICTED_KEPT_MS = 30_000;

/**
 * Resolves true once the disruption controller has nothing left to write to `pdb` (namespace/name),
 * the pods of `evicted` (uids) counted as being deleted; false after `timeoutMs` (the cluster
 * cache's whenPdbSettled).
 */
export type PdbSettled = (pdb: string, evicted: ReadonlySet<string>, timeoutMs: number) => Promise<boolean>;

/** The pod an eviction names, and which of the call's answers mean the API server evicted it. */
export interface Evicting<T> {
  readonly uid: string;
  readonly evicted: (answer: T) => boolean;
}

/**
 * Evictions of pods under one PodDisruptionBudget, one at a time across every node's drain, and
 * sent when no write of the disruption controller to the PDB is due; but never held longer than
 * the API server would hold a conflicting one.
 *
 * Each eviction updates its PDB's status, and the API server answers one whose update conflicted
 * with another write to the PDB only after retrying it 500 ms later. Two evictions at once
 * conflict: so an eviction waits for the one before it on the same PDB (all of its PDBs, for a
 * pod under several) to have answered. The disruption controller writes the PDB too, right after
 * every eviction (the evicted pod leaves disruptedPods, and the healthy count drops) and again as
 * the replacement becomes Ready: an eviction sent the moment the one before answered meets the
 * first of those writes more often than not. So, given `settled` (the caches' view of the PDB),
 * it then waits until the PDB's status agrees with its pods, counting the pods this pacer evicted
 * as being deleted whether or not their deletion has reached the caches yet.
 *
 * A long queue (twenty drains of one workload at once) would cost its last evictions more than
 * the retry they avoid: so no eviction waits, for both, longer than that retry,
 * `EVICTION_CONFLICT_RETRY_MS`, and after it goes whatever it waited for (measured in
 * docs/benchmarks/makespan.md and kairos-peer.md). Pods under no PDB, and evictions of other
 * PDBs, are not held.
 *
 * One pacer serves the whole process: a drain may outlive its round (in-flight.ts), and the
 * next round's evictions of the same PDB queue behind it.
 */
export class EvictionPacer {
  private readonly tails = new Map<string, Promise<void>>();
  /** Per PDB, the uids of pods evicted lately and when. */
  private readonly evicted = new Map<string, Map<string, number>>();

  /**
   * @param maxWaitMs the longest an eviction waits, for the one before it and for the PDB to
   *   settle together (tests shorten it).
   * @param settled how the pacer learns that the PDB's controller has caught up; without it, only
   *   the eviction before is waited for.
   */
  constructor(
    private readonly maxWaitMs = EVICTION_CONFLICT_RETRY_MS,
    private readonly settled?: PdbSettled,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Runs `call` once every earlier call on any of `pdbs` has answered and each of `pdbs` has
   * settled, or `maxWaitMs` has passed. `pod`, when given, is remembered as being deleted once
   * its answer says it was evicted.
   */
  async run<T>(pdbs: readonly string[], call: () => Promise<T>, pod?: Evicting<T>): Promise<T> {
    if (pdbs.length === 0) return call();
    const started = this.now();
    const before = pdbs.map((k) => this.tails.get(k) ?? Promise.resolve());
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    for (const k of pdbs) this.tails.set(k, mine);
    try {
      await within(Promise.all(before), this.maxWaitMs);
      const left = this.maxWaitMs - (this.now() - started);
      const settled = this.settled;
      if (settled !== undefined && left > 0) {
        await Promise.all(pdbs.map((k) => settled(k, this.recentlyEvicted(k), left)));
      }
      const answer = await call();
      if (pod?.evicted(answer)) this.remember(pdbs, pod.uid);
      return answer;
    } finally {
      release();
      for (const k of pdbs) if (this.tails.get(k) === mine) this.tails.delete(k);
    }
  }

  /** PDBs with an eviction under way or waiting (for tests and shutdown). */
  get busy(): number {
    return this.tails.size;
  }

  /** PDBs with pods remembered as evicted (for tests: none once they are all older than kept). */
  get remembered(): number {
    return this.evicted.size;
  }

  private recentlyEvicted(pdb: string): ReadonlySet<string> {
    this.forgetOld();
    return new Set(this.evicted.get(pdb)?.keys());
  }

  private remember(pdbs: readonly string[], uid: string): void {
    this.forgetOld();
    const at = this.now();
    for (const k of pdbs) {
      let m = this.evicted.get(k);
      if (m === undefined) this.evicted.set(k, (m = new Map<string, number>()));
      m.set(uid, at);
    }
  }

  /** Forgets, under every PDB, the pods evicted longer than EVICTED_KEPT_MS ago. */
  private forgetOld(): void {
    const oldest = this.now() - EVICTED_KEPT_MS;
    for (const [k, m] of this.evicted) {
      for (const [uid, at] of m) if (at < oldest) m.delete(uid);
      if (m.size === 0) this.evicted.delete(k);
    }
  }
}
