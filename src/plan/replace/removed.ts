/**
 * Nodes held by a replace rollout that no longer exists: the NodeImage named in the lock is not
 * in Git, and no rollout covers the node's group either (a renamed NodeImage's rollout takes
 * its predecessor's locks over: context.ts' ownership). That happens when a NodeImage and its
 * ScalingGroup leave Git together: the group is no longer drydock's, and nothing else would
 * ever release the node, which would stay cordoned, locked and counted against the budget for
 * good.
 *
 * Each such node is released, and uncordoned if drydock cordoned it. A surge instance made for
 * it stays where it is (the group is not drydock's to resize any more); the note names it.
 * Nothing is decided while any scaling group is unobserved: its nodes are in no rollout's
 * entries then, and a node mid-rollout there must not be taken for an orphan.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { DesiredState } from '../../spec/model.js';
import type { PlanBuilder } from '../builder.js';
import type { ClusterView } from '../view.js';
import type { RolloutContext } from './context.js';
import { releaseNode } from './settle.js';

export function releaseRemovedRollouts(
  desired: DesiredState,
  view: ClusterView,
  rollouts: readonly RolloutContext[],
  b: PlanBuilder,
): void {
  if (rollouts.some((r) => r.notices.some((n) => n.kind === 'unobserved'))) return;
  // A NodeImage still in Git settles its own locks, whichever its strategy now is.
  const inGit = new Set(desired.nodeImages.map((i) => i.name));
  for (const node of view.observed.nodes) {
    const { lock, holds, inPlaceHold } = view.stateOf(node);
    if (lock?.kind !== 'NodeImage' || !holds || inPlaceHold) continue;
    if (inGit.has(lock.name) || rollouts.some((r) => r.entryByNode.has(node.name))) continue;
    const spec = { kind: 'NodeImage', name: lock.name } as const;
    const surge = node.annotations[ANNOTATIONS.replacedBy];
    releaseNode(
      { b, view },
      spec,
      node,
      `NodeImage/${lock.name} is no longer in Git and no rollout covers its group${surge === undefined ? '' : ` (its replacement ${surge} is left in the group)`}`,
    );
  }
}
