/**
 * The executor's node writes, for the simulated worlds of the sequence tests: what an
 * annotateNode, a cordon or an uncordon writes is decided by the executor's own functions
 * (metadataOf, cordonStep, uncordonStep), and only the API server's part is played here:
 * applying the merge patch (null removes a key). A world that copied the rules instead could
 * agree with a copy that the executor no longer follows.
 */
import { cordonStep, metadataOf, uncordonStep, type ActionOf, type NodeTaints } from '../../src/execute/actions.js';

/** A node of a simulated world: what the executor's node writes change. */
export interface PatchableNode {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  unschedulable: boolean;
  /** Taints, in the worlds that keep them (an uncordon may write the list). */
  taints?: NodeTaints;
}

export type NodeWrite = ActionOf<'annotateNode'> | ActionOf<'cordon'> | ActionOf<'uncordon'>;

/** A JSON merge patch of one map: null removes a key. Returns whether the map changed. */
function mergeInto(target: Record<string, string>, patch: Readonly<Record<string, string | null>>): boolean {
  let changed = false;
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      if (k in target) changed = true;
      delete target[k];
    } else {
      if (target[k] !== v) changed = true;
      target[k] = v;
    }
  }
  return changed;
}

/**
 * Applies an annotateNode, a cordon or an uncordon to `n` as the executor would (a cordon or
 * uncordon it skips leaves the node alone); returns whether the node changed.
 */
export function applyNodeWrite(n: PatchableNode, a: NodeWrite): boolean {
  if (a.kind === 'annotateNode') {
    const m = metadataOf(a);
    // Both maps, not `a || b`: the labels are written even when the annotations were already there.
    const annotations = mergeInto(n.annotations, m.annotations);
    const labels = mergeInto(n.labels, m.labels);
    return annotations || labels;
  }
  const step = a.kind === 'cordon' ? cordonStep(n) : uncordonStep(n);
  if (step.kind === 'skipped') return false;
  const annotations = mergeInto(n.annotations, step.patch.annotations);
  const labels = mergeInto(n.labels, step.patch.labels ?? {});
  const unschedulable = step.patch.unschedulable === true;
  const toggled = n.unschedulable !== unschedulable;
  n.unschedulable = unschedulable;
  if (step.patch.taints !== undefined) n.taints = step.patch.taints;
  return annotations || labels || toggled;
}
