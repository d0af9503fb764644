/**
 * How a plan's actions may overlap: each node's steps form a lane, run in plan order; lanes of
 * different nodes run at the same time, a bounded number at once. An action that touches no
 * node (set a group's image, surge, scale the autoscaler) is a barrier: everything before it
 * has finished when it starts (but a drain left running past its round, which no barrier acts
 * on), and nothing after it starts before it has finished. A wave of twenty nodes then costs
 * about one node's calls in wall time, not twenty nodes' one by one, while the protocol's order
 * (lock before surge, annotation before cordon) is kept. A lane's run of evictions (one per pod
 * of the node) is one step (laneSteps): a drain, which may outlive its round (in-flight.ts), as
 * may a whole lane of the last lanes, after every barrier (laneOutlivesRound).
 */
import type { V1Node } from '@kubernetes/client-node';
import type { Action } from '../plan/types.js';
import { UNAVAILABLE_PHASES } from '../plan/protocol.js';
import { ANNOTATIONS, type NodePhase } from '../protocol/keys.js';

/** The node an action touches, if any. */
export function nodeOf(a: Action): string | undefined {
  switch (a.kind) {
    case 'annotateNode':
    case 'cordon':
    case 'uncordon':
    case 'evict':
    case 'deletePod':
    case 'deleteNode':
      return a.node;
    case 'copyLabels':
      return a.to;
    case 'removeInstance':
      return a.node;
    case 'createNodeJob':
    case 'createBottlerocketUpdateJob':
    case 'createGateJob':
    case 'createRebootPod':
    case 'deleteJob':
    case 'deleteRebootPod':
    case 'labelNode':
    case 'markDrainPending':
      return a.node;
    case 'patchPool':
      return undefined;
    case 'setGroupImage':
    case 'surge':
    case 'scaleDeployment':
      return undefined;
  }
}

/** The nodes an action involves: the node whose order it keeps and the node it touches (one, or none). */
export function nodesOf(a: Action): string[] {
  return [...new Set([laneOf(a), nodeOf(a)])].filter((n): n is string => n !== undefined);
}

/**
 * The node whose order an action keeps (its own, or the one it is the step of: forNode);
 * undefined for an action that touches no node, which stays a barrier whatever it names.
 */
export function laneOf(a: Action): string | undefined {
  if (nodeOf(a) === undefined) return undefined;
  if (a.forNode !== undefined) return a.forNode;
  // Labels copied onto a replacement are the replaced node's step, like its Done mark.
  if (a.kind === 'copyLabels') return a.from;
  return nodeOf(a);
}

/** A run of the plan: one barrier action, or lanes (plan indices, in order) that may overlap. */
export type Segment = { readonly barrier: number } | { readonly lanes: ReadonlyMap<string, readonly number[]> };

/** The plan cut at its barriers; between two barriers, the actions grouped by lane. */
export function segments(actions: readonly Action[]): Segment[] {
  const out: Segment[] = [];
  let lanes = new Map<string, number[]>();
  for (const [i, a] of actions.entries()) {
    const lane = laneOf(a);
    if (lane === undefined) {
      if (lanes.size > 0) out.push({ lanes });
      lanes = new Map();
      out.push({ barrier: i });
      continue;
    }
    const list = lanes.get(lane);
    if (list === undefined) lanes.set(lane, [i]);
    else list.push(i);
  }
  if (lanes.size > 0) out.push({ lanes });
  return out;
}

/** An action of a node that touches one of its pods: an eviction or a pod deletion. */
export function touchesOnePod(a: Action | undefined): boolean {
  return a?.kind === 'evict' || a?.kind === 'deletePod';
}

/**
 * A lane's actions (plan indices, in order) as its steps: each action alone, except that a run
 * of evictions and pod deletions is one step, the node's drain, and that an action planned
 * beside the step before it (Action.beside) joins that step: the two start together.
 */
export function laneSteps(actions: readonly Action[], indices: readonly number[]): number[][] {
  const steps: number[][] = [];
  for (const i of indices) {
    const last = steps.at(-1);
    const first = actions[last?.[0] ?? -1];
    if (last !== undefined && touchesOnePod(actions[i]) && touchesOnePod(first)) last.push(i);
    else if (last !== undefined && actions[i]?.beside === true && !touchesOnePod(first)) last.push(i);
    else steps.push([i]);
  }
  return steps;
}

/**
 * Steps that may outlive their round when a lane has nothing else: none changes what a plan
 * counts to start a node or to add an instance (a lock taken, an instance claimed, added or
 * removed, a Node deleted, a label or pool the Machine Config Operator reads), so a round that
 * plans while they run, on caches that do not show them yet, counts what still holds. A phase,
 * a cordon, a drain, a Job or a reboot pod of a node already locked is such a step: the node's
 * lock counts against the budget whatever its phase.
 */
const OUTLIVING_STEPS: ReadonlySet<Action['kind']> = new Set([
  'annotateNode',
  'cordon',
  'uncordon',
  'evict',
  'deletePod',
  'createNodeJob',
  'createBottlerocketUpdateJob',
  'createRebootPod',
  'deleteJob',
  'deleteRebootPod',
]);

/**
 * Whether a lane may outlive its round: every step may (outlivesRound), and the lane takes no
 * node down that the caches show up. A node going unavailable (its cordon, its first phase of
 * UNAVAILABLE_PHASES) counts against the budget's room to take down another (budget.ts
 * canTakeDown), which a round planning beside the lane would not see; a node the caches already
 * show down (Draining, Updating, Rebooting...) goes on down, and going up frees room late, never
 * early.
 */
export function laneOutlivesRound(
  actions: readonly Action[],
  indices: readonly number[],
  cachedNode: ((name: string) => V1Node | undefined) | undefined,
): boolean {
  const steps = indices.map((i) => actions[i]);
  if (!steps.every(outlivesRound)) return false;
  return steps.every((a) => a === undefined || !takesDown(a) || cachedDown(cachedNode, nodeOf(a)));
}

/** A cordon, or a phase in which a node is unavailable to workloads. */
function takesDown(a: Action): boolean {
  if (a.kind === 'cordon') return true;
  if (a.kind !== 'annotateNode') return false;
  const phase = a.annotations[ANNOTATIONS.phase];
  return typeof phase === 'string' && UNAVAILABLE_PHASES.has(phase as NodePhase);
}

/** Whether the caches show `node` locked in a phase in which it is unavailable. */
function cachedDown(cachedNode: ((name: string) => V1Node | undefined) | undefined, node: string | undefined): boolean {
  const a = node === undefined ? undefined : cachedNode?.(node)?.metadata?.annotations;
  const phase = a?.[ANNOTATIONS.phase];
  return a?.[ANNOTATIONS.operation] !== undefined && phase !== undefined && UNAVAILABLE_PHASES.has(phase as NodePhase);
}

/** Annotations whose writing takes a node or an instance (the lock, a replacement's claim). */
const CLAIMS = [ANNOTATIONS.operation, ANNOTATIONS.replacedBy, ANNOTATIONS.replaces];

/** Whether an action may outlive its round (OUTLIVING_STEPS; an annotation that claims nothing). */
function outlivesRound(a: Action | undefined): boolean {
  if (a === undefined || !OUTLIVING_STEPS.has(a.kind)) return false;
  return a.kind !== 'annotateNode' || CLAIMS.every((k) => a.annotations[k] === undefined || a.annotations[k] === null);
}

/** Runs `work` on every item, at most `limit` at once; resolves when all have finished. */
export async function eachAtMost<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
