/**
 * Who holds a node, from one spec's point of view, for every kind: the one reading of the lock
 * (drydock.dev/operation) that says whether a spec may start a node, must settle it, or must
 * leave it to another operation. A kind says only which locks are its own and which of those
 * are of its spec as it is now.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { holdsLock, parseLock, type OperationRef } from '../protocol.js';

/**
 * free: no operation holds it; done: the spec's record says it is done for this revision (whoever
 * holds it now);
 * current: held by the spec as it is now; stale: held by it under an older revision (or a
 * lock it takes over); foreign: held by another operation, or by a lock nobody can read.
 */
export type Standing = 'free' | 'done' | 'current' | 'stale' | 'foreign';

export interface Claim {
  /** Whether a lock is the kind's own to continue or settle. */
  mine(lock: OperationRef, node: ObservedNode): boolean;
  /** Whether one of its locks is of the spec as it is now. */
  current(lock: OperationRef): boolean;
  /** Whether the spec's record says the node is done (read only when no lock holds it). */
  done?(node: ObservedNode): boolean;
}

export function standing(node: ObservedNode, claim: Claim): Standing {
  const holds = holdsLock(node);
  const lock = holds ? parseLock(node.annotations[ANNOTATIONS.operation]) : undefined;
  if (lock !== undefined && claim.mine(lock, node)) return claim.current(lock) ? 'current' : 'stale';
  // Done for this revision stays done when another operation holds the node later.
  if (claim.done?.(node) === true) return 'done';
  return holds ? 'foreign' : 'free';
}
