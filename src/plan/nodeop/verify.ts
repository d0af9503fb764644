/**
 * Verifying, the last step of an in-place node (NodeOp, NodeOpUpgrade, NodeImage inPlace): the
 * node is uncordoned, then it must pass the shared health gate (health.ts) before it is done. A
 * node that does not pass within healthGate.timeout fails, and stopOnFailure halts the spec.
 * Then its UpgradeGate after-Jobs run (nodeop/gates.ts), and only then is its lock released.
 */
import type { ObservedNode } from '../../observe/types.js';
import { healthOf } from '../health.js';
import type { NodeOpContext } from './context.js';
import { nodeGates } from './gates.js';
import { failNode, finishNode, type Ended } from './step.js';

/** What this round did with a Verifying node: ended it (failed), finished it (done), or neither. */
export type Verified = { readonly ended: Ended } | { readonly done: true } | undefined;

/**
 * The node passed its health gate: the UpgradeGate after-Jobs run one after another (found
 * again each round, never made twice), then the node is finished.
 */
function afterHealthy(ctx: NodeOpContext, node: ObservedNode): Verified {
  // With no after-Job to run, the gates pass at once.
  const gate = nodeGates(ctx, node, 'after');
  if (gate.kind === 'passed') {
    finishNode(ctx, node, `node ${node.name} passed the health gate and any UpgradeGate after-Jobs`);
    return { done: true };
  }
  if (gate.kind === 'failed') return { ended: failNode(ctx, node, gate.reason, gate.job) };
  return undefined;
}

/** The health gate of a node whose operation is done: whether it failed it, or passed and is done. */
export function verifyStep(ctx: NodeOpContext, node: ObservedNode): Verified {
  const gate = ctx.op.rollout.healthGate;
  const health = healthOf(ctx.view, node, gate.minReadySeconds, ctx.now);
  if (health.blocker === undefined && health.at <= ctx.now) {
    return afterHealthy(ctx, node);
  }
  const since = ctx.view.stateOf(node).since ?? ctx.now;
  const deadline = gate.timeoutSeconds !== undefined ? since + gate.timeoutSeconds * 1000 : undefined;
  const what = health.blocker ?? `it has not stayed Ready for ${gate.minReadySeconds}s`;
  if (deadline !== undefined && deadline <= ctx.now) {
    return {
      ended: failNode(
        ctx,
        node,
        `node ${node.name} did not pass the health gate within ${gate.timeoutSeconds ?? 0}s (${what})`,
      ),
    };
  }
  const until = health.blocker === undefined ? Math.min(health.at, deadline ?? health.at) : deadline;
  ctx.b.wait(ctx.spec, 'health', `node ${node.name}: health gate: ${what}`, {
    node: node.name,
    ...(until !== undefined ? { until } : {}),
  });
}
