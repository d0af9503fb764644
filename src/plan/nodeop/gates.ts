/**
 * UpgradeGates on the NodeOp machinery (NodeOp, NodeOpUpgrade, NodeImage inPlace): before-Jobs
 * run while the node is Pending, before its cordon; after-Jobs run in Verifying, once the node
 * is done and uncordoned, before its lock is released. src/plan/gates.ts walks the Jobs.
 */
import type { ObservedNode } from '../../observe/types.js';
import { cleanUpGateJobs, gatesFor, runGates, type GateInput, type GateResult, type GateStep } from '../gates.js';
import type { NodeState } from '../protocol.js';
import type { NodeOpContext } from './context.js';

function gateInput(ctx: NodeOpContext, node: ObservedNode): GateInput {
  return {
    desired: ctx.desired,
    view: ctx.view,
    b: ctx.b,
    spec: ctx.spec,
    operation: ctx.operation,
    defaultNamespace: ctx.settings.jobNamespace,
    node,
  };
}

export function nodeGates(ctx: NodeOpContext, node: ObservedNode, step: GateStep): GateResult {
  return runGates(gateInput(ctx, node), step);
}

/** Whether an UpgradeGate has before-Jobs for the node: they run while it is Pending, before its cordon. */
export function hasBeforeJobs(ctx: Pick<NodeOpContext, 'desired' | 'spec'>, node: ObservedNode): boolean {
  return gatesFor(ctx.desired, ctx.spec, node).some((g) => g.before.length > 0);
}

/** The phase that reads each step's Jobs: Pending the before-Jobs, Verifying the after-Jobs. */
function consults({ phase }: NodeState): GateStep | undefined {
  return phase === 'Pending' ? 'before' : phase === 'Verifying' ? 'after' : undefined;
}

export function cleanUpNodeGateJobs(ctx: NodeOpContext): void {
  cleanUpGateJobs(ctx, consults);
}
