/**
 * Who holds a node, from one spec's point of view, for every kind: the one reading of the lock
 * (drydock.dev/operation) that says whether a spec may start a node, must settle it, or must
 * leave it to another operation. A kind says only which locks are its own and which of those
 * are of its spec as it is now.
 */
import type { ObservedNode } from '../../observe/types.js';
import type { NodeState, OperationRef } from '../protocol.js';

/**
 * free: no operation holds it; done: the spec's record says it is done for this revision (whoever
 * holds it now);
 * current: held by the spec as it is now; stale: held by it under an older revision (or a
 * lock it takes over); foreign: held by another operation, or by a lock nobody can read.
 */
export type Standing = 'free' | 'done' | 'current' | 'stale' | 'foreign';

export interface Claim {
  /** Whether a lock is the kind's own to continue or settle (`state`: the node's that carries it). */
  mine(lock: OperationRef, state: NodeState): boolean;
  /** Whether one of its locks is of the spec as it is now. */
  current(lock: OperationRef): boolean;
  /** Whether the spec's record says the node is done (read only when no lock holds it). */
  done?(node: ObservedNode): boolean;
}

/** The node's standing towards a spec, from its state this round (view.ts' stateOf). */
export function standing(node: ObservedNode, state: NodeState, claim: Claim): Standing {
  const lock = state.holds ? state.lock : undefined;
  if (lock !== undefined && claim.mine(lock, state)) return claim.current(lock) ? 'current' : 'stale';
  // Done for this revision stays done when another operation holds the node later.
  if (claim.done?.(node) === true) return 'done';
  return state.holds ? 'foreign' : 'free';
}
