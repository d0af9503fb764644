/**
 * UpgradeGates on a replace rollout. The old node's before-Jobs run once its replacement
 * passed its health gate and before the old node is cordoned and drained; its after-Jobs run
 * once it is drained, before its instance is removed. Both get the old node's name and the
 * replacement's. src/plan/gates.ts walks the Jobs.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { cleanUpGateJobs, runGates, type GateInput, type GateResult, type GateStep } from '../gates.js';
import type { NodeState } from '../protocol.js';
import type { Entry, RolloutContext } from './context.js';

function operationOf(ctx: RolloutContext): GateInput['operation'] {
  return { kind: 'NodeImage', name: ctx.image.name, revision: ctx.image.revision };
}

/** The node that replaces `e`'s, when it has joined. */
function replacementName(ctx: RolloutContext, e: Entry): string | undefined {
  const id = e.node?.annotations[ANNOTATIONS.replacedBy];
  const inst = id !== undefined ? e.group.byId.get(id) : undefined;
  return inst !== undefined ? ctx.view.nodeByProviderID.get(inst.providerID)?.name : undefined;
}

export function replaceGates(ctx: RolloutContext, e: Entry, node: ObservedNode, step: GateStep): GateResult {
  const replacement = replacementName(ctx, e);
  return runGates(
    {
      desired: ctx.desired,
      view: ctx.view,
      b: ctx.b,
      spec: ctx.spec,
      operation: operationOf(ctx),
      defaultNamespace: ctx.options.jobNamespace,
      node,
      ...(replacement !== undefined ? { replacement } : {}),
    },
    step,
  );
}

/** Pending reads the before-Jobs (up to the cordon); Draining and Verifying the after-Jobs. */
function consults({ phase }: NodeState): GateStep | undefined {
  return phase === 'Pending' ? 'before' : phase === 'Draining' || phase === 'Verifying' ? 'after' : undefined;
}

export function cleanUpReplaceGateJobs(ctx: RolloutContext): void {
  cleanUpGateJobs({ b: ctx.b, spec: ctx.spec, view: ctx.view, operation: operationOf(ctx) }, consults);
}
