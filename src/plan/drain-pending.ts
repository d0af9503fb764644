/**
 * Which nodes carry DRAIN_PENDING_TAINT: those a running rollout drains later. The scheduler
 * then places the pods each drain evicts on nodes already done (or outside the rollout) while
 * they have room, not on the next nodes to be drained, where they would be evicted again: in a
 * replace, the old nodes still waiting; in place, the nodes not yet updated.
 *
 * A rollout is running from its start (not before, while it waits for its window, a calendar
 * or an approval) to its end, pauses and halts included, so a soak or a wave's approval does
 * not take the taint off every node and put it back. A node keeps it until its own turn has
 * passed: a replaced node is deleted with it; a node updated in place loses it with its uncordon.
 * The taint is PreferNoSchedule: with nowhere else to go, pods still land on a tainted node.
 */
import { ANNOTATIONS, DRAIN_PENDING_TAINT } from '../protocol/keys.js';
import type { ObservedNode } from '../observe/types.js';
import type { PlanBuilder } from './builder.js';
import type { NodeState } from './protocol.js';
import type { ClusterView } from './view.js';
import type { ForecastInput } from './forecast.js';
import type { SpecRef } from './types.js';
import type { SpecKind } from '../spec/model.js';

/**
 * The most marks put on or taken off in one round. A round lasts until its last action has
 * answered, and a wide rollout's first round would otherwise patch every node of it at once
 * (200 nodes: 3–4 s at the start of the benchmark's rollouts, the first wave's steps waiting for
 * the round to end; 5,000 nodes: over a minute). The rest follow in the next rounds, the nodes
 * the rollout reaches first first; the execution runs about as many lanes at once.
 */
export const MARKS_PER_ROUND = 32;

/** The kinds whose rollouts have forecasts, and so may put the taint on. */
const MARKING_KINDS = ['NodeImage', 'NodeOp', 'NodeOpUpgrade'] as const satisfies readonly SpecKind[];

/** Whether drydock's taint is on `node`. */
export function drainPending(node: Pick<ObservedNode, 'taints'>): boolean {
  return node.taints.some((t) => t.key === DRAIN_PENDING_TAINT.key && t.effect === DRAIN_PENDING_TAINT.effect);
}

/** The spec a taint's annotation names (Kind/name); undefined if it names none drydock knows. */
function markedBy(node: ObservedNode): SpecRef | undefined {
  const text = node.annotations[ANNOTATIONS.drainPending];
  const at = text?.indexOf('/') ?? -1;
  if (text === undefined || at <= 0) return undefined;
  const kind = MARKING_KINDS.find((k) => k === text.slice(0, at));
  return kind === undefined ? undefined : { kind, name: text.slice(at + 1) };
}

/** The rollouts' forecasts → the nodes each running one drains later, first spec first. */
function wanted(forecasts: readonly ForecastInput[], nowMs: number): Map<string, SpecRef> {
  const want = new Map<string, SpecRef>();
  for (const f of forecasts) {
    const running = f.begun === true || (!f.blocked && f.startAt <= nowMs);
    if (f.drains !== true || !running) continue;
    for (const node of f.remaining) if (!want.has(node)) want.set(node, f.spec);
  }
  return want;
}

/** Whether another operation than `spec` holds the node (one lock per node: its holder alone writes it). */
function heldByOther(state: NodeState, spec: SpecRef): boolean {
  return state.holds && (state.lock?.kind !== spec.kind || state.lock.name !== spec.name);
}

/**
 * Puts the taint on the schedulable nodes the running rollouts drain later and takes drydock's
 * own off every other node; a taint of that key without drydock's annotation is someone else's
 * and left alone, and a node another operation holds is left to it until released. Acted last
 * in the round, after each node's own steps.
 */
export function planDrainPending(
  forecasts: readonly ForecastInput[],
  view: Pick<ClusterView, 'observed' | 'stateOf'>,
  nowMs: number,
  b: PlanBuilder,
): void {
  const want = wanted(forecasts, nowMs);
  // The forecasts' order: in flight first, then in the order the rollouts reach them.
  const order = new Map([...want.keys()].map((name, i) => [name, i]));
  const nodes = [...view.observed.nodes].sort(
    (x, y) => (order.get(x.name) ?? order.size) - (order.get(y.name) ?? order.size),
  );
  let budget = MARKS_PER_ROUND;
  for (const node of nodes) {
    if (budget === 0) return;
    // Locked this round (by whichever operation): the lock's holder writes it first; next round decides.
    if (b.taken.has(node.name)) continue;
    const spec = want.get(node.name);
    const marked = drainPending(node);
    if (spec !== undefined && !marked) {
      // A cordoned node takes no pods: the taint would change nothing there. A node an operation
      // holds is that operation's to write; this rollout's own, started, keeps a mark made before
      // until its uncordon takes it off (the same patch) or it is deleted, and gets none after.
      if (node.unschedulable || view.stateOf(node).holds) continue;
      budget--;
      b.act({
        kind: 'markDrainPending',
        spec,
        node: node.name,
        pending: true,
        reason: `${node.name} is drained later in this rollout; new and evicted pods prefer other nodes`,
      });
    } else if (spec === undefined && marked) {
      const by = markedBy(node);
      if (by === undefined || heldByOther(view.stateOf(node), by)) continue;
      budget--;
      b.act({
        kind: 'markDrainPending',
        spec: by,
        node: node.name,
        pending: false,
        reason: `${node.name} is not drained later by a running rollout; pods may land on it again`,
      });
    }
  }
}
