/**
 * The cluster-wide disruption budget (drydock.yaml budget) shared by every operation. A node
 * counts against it while it is unavailable (cordoned by drydock, or in an unavailable phase)
 * and also while an operation holds it Pending: a started node is a promise to take it down
 * soon, so its share is reserved at start and the budget can never be overrun by nodes that
 * were started while it still had room. A Failed node counts no more.
 *
 * How many nodes the budget allows may vary by window, as Karpenter's disruption budgets do:
 * while any of budget.windows that applies to a kind is active, the most restrictive of those
 * is in force for it; outside every window, budget.maxUnavailable. Every kind counts against
 * the one tally of nodes down; only what it may add to it differs.
 */
import type { ObservedNode } from '../observe/types.js';
import type { BudgetWindow, IntOrPercent, RepoConfig, SpecKind } from '../spec/model.js';
import { parseNodeState, type NodeState } from './protocol.js';
import { resolveQuantity } from './quantity.js';
import { isWindowOpen, nextWindowOpening, opening, windowClosing, type WindowTimes } from './window.js';
import { plural } from '../words.js';

/** Nodes down and nodes down or reserved, shared by every kind's view of the budget. */
interface Counts {
  unavailable: number;
  used: number;
}

/** Which budget is in force for a kind at an instant, and when that changes. */
export interface BudgetInForce {
  readonly max: number;
  /** Where it is written: budget.maxUnavailable or budget.windows[i]. */
  readonly from: string;
  /** When it stops being in force (the next change of budget), if within the look-ahead. */
  readonly until?: number;
  /** The budget in force from `until` on. */
  readonly next?: { readonly max: number; readonly from: string };
}

/** How often a change of budget that changes nothing is skipped before giving up on a next one. */
const MAX_CHANGES = 50;

function resolve(value: IntOrPercent, total: number): number {
  const resolved = resolveQuantity(value, total, 'down');
  // A percentage of a small cluster rounds to zero; one node at a time is the least a
  // percentage can mean. A literal 0 is taken at its word (nothing may go down).
  return typeof value === 'string' && total > 0 ? Math.max(1, resolved) : resolved;
}

function timesOf(w: BudgetWindow): WindowTimes {
  return { timeZone: w.timeZone, schedules: [{ cron: w.cron, durationSeconds: w.durationSeconds }], exclusions: [] };
}

function applies(w: BudgetWindow, kind: SpecKind | undefined): boolean {
  return w.kinds === undefined || (kind !== undefined && w.kinds.includes(kind));
}

/** The budget for `kind` at `at` alone: the most restrictive active window, else maxUnavailable. */
function budgetAt(
  config: RepoConfig['budget'],
  kind: SpecKind | undefined,
  total: number,
  at: number,
): Omit<BudgetInForce, 'until' | 'next'> {
  let best: { max: number; from: string } | undefined;
  (config.windows ?? []).forEach((w, i) => {
    if (!applies(w, kind) || !isWindowOpen(timesOf(w), new Date(at))) return;
    const max = resolve(w.maxUnavailable, total);
    if (best === undefined || max < best.max) best = { max, from: `budget.windows[${i}]` };
  });
  return best ?? { max: resolve(config.maxUnavailable, total), from: 'budget.maxUnavailable' };
}

/** The next instant after `at` at which a window that applies to `kind` opens or closes. */
function nextEdge(config: RepoConfig['budget'], kind: SpecKind | undefined, at: number): number | undefined {
  let edge: number | undefined;
  for (const w of config.windows ?? []) {
    if (!applies(w, kind)) continue;
    const times = timesOf(w);
    const now = new Date(at);
    const t = isWindowOpen(times, now) ? windowClosing(times, now) : nextWindowOpening(times, now);
    if (t !== undefined && t.getTime() > at && (edge === undefined || t.getTime() < edge)) edge = t.getTime();
  }
  return edge;
}

/** The budget in force for `kind` (undefined: a kind no window names) at `now`, and its next change. */
export function budgetInForce(
  config: RepoConfig['budget'],
  kind: SpecKind | undefined,
  total: number,
  now: number,
): BudgetInForce {
  const current = budgetAt(config, kind, total, now);
  let at = now;
  for (let i = 0; i < MAX_CHANGES; i++) {
    const edge = nextEdge(config, kind, at);
    if (edge === undefined) break;
    const then = budgetAt(config, kind, total, edge);
    if (then.max !== current.max || then.from !== current.from) return { ...current, until: edge, next: then };
    at = edge;
  }
  return current;
}

/** "1 node (drydock.yaml budget.windows[0]); from 2026-03-30 22:00 UTC, 5 nodes (budget.windows[1])". */
export function describeInForce(b: BudgetInForce): string {
  const now = `${plural(b.max, 'node')} (drydock.yaml ${b.from})`;
  if (b.until === undefined || b.next === undefined) return now;
  return `${now}; from ${opening(new Date(b.until), 'UTC')}, ${plural(b.next.max, 'node')} (${b.next.from})`;
}

/**
 * With budget.windows: which budget is in force and when the next one starts, one line per kind
 * a window names and one for every other kind, for plan and status to show. Undefined without
 * windows (budget.maxUnavailable is then always the budget).
 */
export function budgetLines(config: RepoConfig['budget'], total: number, now: number): string[] | undefined {
  const windows = config.windows;
  if (windows === undefined) return undefined;
  const named = [...new Set(windows.flatMap((w) => w.kinds ?? []))].sort();
  const line = (who: string, kind: SpecKind | undefined): string =>
    `${who}: ${describeInForce(budgetInForce(config, kind, total, now))}`;
  return [...named.map((k) => line(k, k)), line(named.length === 0 ? 'every kind' : 'every other kind', undefined)];
}

export class ClusterBudget {
  private readonly counts: Counts;
  readonly max: number;
  /** The budget in force for this view's kind, and when it changes. */
  readonly inForce: BudgetInForce;

  /**
   * `stateOf`: each node's protocol state, the round's (view.ts) when there is one; `now` and
   * `kind` choose among budget.windows (without `now`, budget.maxUnavailable alone).
   */
  constructor(
    private readonly config: RepoConfig,
    private readonly nodes: readonly ObservedNode[],
    stateOf: (node: ObservedNode) => NodeState = parseNodeState,
    private readonly now?: number,
    kind?: SpecKind,
    counts?: Counts,
  ) {
    this.inForce =
      now === undefined
        ? { max: resolve(config.budget.maxUnavailable, nodes.length), from: 'budget.maxUnavailable' }
        : budgetInForce(config.budget, kind, nodes.length, now);
    this.max = this.inForce.max;
    this.counts = counts ?? countNodes(nodes, stateOf);
  }

  /** The same tally of nodes down, with the budget in force for `kind`. */
  forKind(kind: SpecKind): ClusterBudget {
    if (this.config.budget.windows === undefined) return this;
    return new ClusterBudget(this.config, this.nodes, parseNodeState, this.now, kind, this.counts);
  }

  /** Room for another node to start. */
  get free(): number {
    return Math.max(0, this.max - this.counts.used);
  }

  reserve(): void {
    this.counts.used++;
  }

  /**
   * A finished node's share, given back as its release is written: only for the node started in
   * its place, whose steps run after that release (sequence/admit.ts HandOver), so no other
   * operation counts on a share that is not yet free.
   */
  giveBack(unavailable: boolean): void {
    this.counts.used--;
    if (unavailable) this.counts.unavailable--;
  }

  /** Whether the nodes started stay within the budget in force (not so once it was lowered under them). */
  get withinLimit(): boolean {
    return this.counts.used <= this.max;
  }

  /** Whether one more node may go unavailable now (its reservation was made at start). */
  canTakeDown(): boolean {
    return this.counts.unavailable + 1 <= this.max;
  }

  takeDown(): void {
    this.counts.unavailable++;
  }

  /** When the budget in force changes (a window opens or closes), if it does: a wait on it ends then. */
  get until(): number | undefined {
    return this.inForce.until;
  }

  describe(): string {
    if (this.config.budget.windows === undefined)
      return `cluster budget allows ${plural(this.max, 'node')} unavailable at once across all operations (drydock.yaml budget.maxUnavailable)`;
    const { max, from, until, next } = this.inForce;
    const later =
      until !== undefined && next !== undefined
        ? `; from ${opening(new Date(until), 'UTC')} it allows ${plural(next.max, 'node')} (${next.from})`
        : '';
    return `cluster budget allows ${plural(max, 'node')} unavailable at once across all operations (drydock.yaml ${from})${later}`;
  }
}

function countNodes(nodes: readonly ObservedNode[], stateOf: (node: ObservedNode) => NodeState): Counts {
  const counts: Counts = { unavailable: 0, used: 0 };
  for (const node of nodes) {
    const state = stateOf(node);
    // A Failed node releases its share, even one kept cordoned (onFailure keepCordoned, a
    // halted drain): it waits for a person, and must not hold every other operation back.
    // A Skipped one was given back to its workloads.
    if (state.settled && state.holds) continue;
    if (state.unavailable) {
      counts.unavailable++;
      counts.used++;
    } else if (state.holds) {
      counts.used++;
    }
  }
  return counts;
}
