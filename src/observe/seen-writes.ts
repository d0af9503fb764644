/**
 * Which of drydock's own writes the watch caches have seen. A write's answer carries the
 * object's new resourceVersion; its watch event carries the same one, a moment later (or, now
 * and then, a moment earlier than the answer is read). A round planned before that event
 * would read the node as it was before drydock wrote to it, and the round that follows a write
 * need not wait a fixed settle time: it can start as soon as the write is seen.
 *
 * The versions of the latest watch events are kept, a bounded number: enough for the seconds
 * between a write and the next round at any event rate drydock meets, never a growing set.
 * A write also counts as seen when the cache holds its object at that version (a merge patch
 * that changed nothing keeps the version the cache already has).
 */

import type { Written } from '../kube/written.js';
import { TimedWaits } from './timed-waits.js';

export type { Written };

/** The resourceVersion the cache holds for an object now, if it holds it. */
export type HeldVersion = (w: Written) => string | undefined;

/** How many watch events' versions are remembered. */
export const SEEN_KEPT = 4096;

const keyOf = (collection: string, resourceVersion: string): string => `${collection}\n${resourceVersion}`;

export class SeenWrites {
  private readonly ring: string[] = [];
  private next = 0;
  private readonly recent = new Set<string>();
  /** Each wait's writes not seen yet (keyOf). */
  private readonly waits = new TimedWaits<Set<string>>();

  constructor(
    private readonly held: HeldVersion,
    private readonly kept = SEEN_KEPT,
  ) {}

  /** A watch event of `collection` carried `resourceVersion`. */
  saw(collection: string, resourceVersion: string | undefined): void {
    if (resourceVersion === undefined || resourceVersion === '') return;
    const key = keyOf(collection, resourceVersion);
    if (this.recent.has(key)) return;
    const dropped = this.ring[this.next];
    if (dropped !== undefined) this.recent.delete(dropped);
    this.ring[this.next] = key;
    this.next = (this.next + 1) % this.kept;
    this.recent.add(key);
    this.waits.endWhere((pending) => {
      pending.delete(key);
      return pending.size === 0;
    });
  }

  /** Whether the caches have seen `w`. */
  has(w: Written): boolean {
    return this.recent.has(keyOf(w.collection, w.resourceVersion)) || this.held(w) === w.resourceVersion;
  }

  /**
   * Resolves true once every write of `writes` has been seen, false after `timeoutMs` if some
   * has not (a watch restarting from a fresh list never shows a version a later write replaced).
   */
  whenSeen(writes: readonly Written[], timeoutMs: number): Promise<boolean> {
    const pending = new Set(writes.filter((w) => !this.has(w)).map((w) => keyOf(w.collection, w.resourceVersion)));
    if (pending.size === 0) return Promise.resolve(true);
    return this.waits.wait(pending, timeoutMs);
  }

  /** Ends every wait as not seen (the caches stop). */
  stop(): void {
    this.waits.stop();
  }
}
