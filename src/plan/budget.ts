/**
 * The cluster-wide disruption budget (drydock.yaml budget.maxUnavailable) shared by every
 * operation. A node counts against it while it is unavailable (cordoned by drydock, or in an
 * unavailable phase) and also while an operation holds it Pending: a started node is a
 * promise to take it down soon, so its share is reserved at start and the budget can never be
 * overrun by nodes that were started while it still had room. A Failed node counts no more.
 */
import type { ObservedNode } from '../observe/types.js';
import type { RepoConfig } from '../spec/model.js';
import { parseNodeState, type NodeState } from './protocol.js';
import { resolveQuantity } from './quantity.js';
import { plural } from '../words.js';

export class ClusterBudget {
  /** Nodes unavailable right now. */
  private unavailable = 0;
  /** Unavailable plus reserved (held Pending). */
  private used = 0;
  readonly max: number;

  /** `stateOf`: each node's protocol state, the round's (view.ts) when there is one. */
  constructor(
    config: RepoConfig,
    nodes: readonly ObservedNode[],
    stateOf: (node: ObservedNode) => NodeState = parseNodeState,
  ) {
    const value = config.budget.maxUnavailable;
    const resolved = resolveQuantity(value, nodes.length, 'down');
    // A percentage of a small cluster rounds to zero; one node at a time is the least a
    // percentage can mean. A literal 0 is taken at its word (nothing may go down).
    this.max = typeof value === 'string' && nodes.length > 0 ? Math.max(1, resolved) : resolved;
    for (const node of nodes) {
      const state = stateOf(node);
      // A Failed node releases its share, even one kept cordoned (onFailure keepCordoned, a
      // halted drain): it waits for a person, and must not hold every other operation back.
      // A Skipped one was given back to its workloads.
      if (state.settled && state.holds) continue;
      if (state.unavailable) {
        this.unavailable++;
        this.used++;
      } else if (state.holds) {
        this.used++;
      }
    }
  }

  /** Room for another node to start. */
  get free(): number {
    return Math.max(0, this.max - this.used);
  }

  reserve(): void {
    this.used++;
  }

  /** Whether one more node may go unavailable now (its reservation was made at start). */
  canTakeDown(): boolean {
    return this.unavailable + 1 <= this.max;
  }

  takeDown(): void {
    this.unavailable++;
  }

  describe(): string {
    return `cluster budget allows ${plural(this.max, 'node')} unavailable at once across all operations (drydock.yaml budget.maxUnavailable)`;
  }
}
