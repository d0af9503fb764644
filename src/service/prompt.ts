/**
 * Which watch events start the next round promptly, and which keep to the spaced gap after the
 * last one (scheduler.ts). Most events of a busy cluster are nobody's next step: a workload's
 * pods coming and going, other nodes' status. But a node the last round left waiting on the
 * world (its drain's pods to go, its Job to finish, its reboot, its health gate) moves on from
 * the event that ends its wait, and a gap of up to 250 ms before each of a node's four or five
 * steps is a rollout's overhead over the calls it makes (docs/benchmarks/makespan.md). So a
 * change to a Node (the caches drop heartbeats, so these are joins, readiness, reboots, taints
 * and drydock's own patches), to one of drydock's own Jobs, or to a pod on a node the last plan
 * waits for asks for a round PROMPT_GAP_MS after the last; every other event keeps the gap.
 */
import type { WatchedChange } from '../observe/cluster-cache.js';
import type { Wait } from '../plan/types.js';
import { SPACED_MIN_MS } from './scheduler.js';

/** The gap after the last round that a prompt event asks for: the scheduler's least. */
export const PROMPT_GAP_MS = SPACED_MIN_MS;

/** The nodes the last round's plan left waiting, read from its waits once per round. */
export class PromptEvents {
  private waits: readonly Wait[] | undefined;
  private nodes: ReadonlySet<string> = new Set();

  /** The waits of the plan the last round made (none before the first round). */
  planned(waits: readonly Wait[] | undefined): void {
    if (waits === this.waits) return;
    this.waits = waits;
    this.nodes = new Set((waits ?? []).flatMap((w) => (w.node !== undefined ? [w.node] : [])));
  }

  /** Whether `change` may end a wait of the last plan, and so asks for a prompt round. */
  prompt(change: WatchedChange): boolean {
    if (change.collection === 'jobs' || change.collection === 'nodes') return true;
    return change.collection === 'pods' && change.node !== undefined && this.nodes.has(change.node);
  }
}
