/**
 * When an in-place spec (NodeOp, NodeOpUpgrade, NodeImage inPlace) may start a new node: the
 * shared calendar (the maintenance window, approvals at start and after the canary) and the
 * canary wave with its soak, the same gates a replace rollout passes (replace/start.ts). The
 * canary is read back from the cluster: the nodes that carry this spec's record, earliest
 * drydock.dev/done-at first.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { findNodeOpApproval, nodeOpApprovalNeeded } from '../approval.js';
import type { ApprovalWanted } from '../types.js';
import { compareStrings } from '../order.js';
import { parseInstant } from '../protocol.js';
import { windowGate } from '../window.js';
import type { NodeOpContext, Standing } from './context.js';

export type NodeOpGate =
  | { readonly open: true; readonly limit?: number }
  | {
      readonly open: false;
      readonly code: 'window' | 'approval' | 'soak';
      readonly reason: string;
      readonly until?: number;
      readonly approval?: ApprovalWanted;
    };

/** Nodes done under this spec as it is now, earliest first. */
function doneNodes(ctx: NodeOpContext, standing: ReadonlyMap<string, Standing>): ObservedNode[] {
  return ctx.nodes
    .filter((n) => standing.get(n.name) === 'done')
    .map((n) => ({ n, at: parseInstant(n.annotations[ANNOTATIONS.doneAt]) ?? 0 }))
    .sort((a, b) => a.at - b.at || compareStrings(a.n.name, b.n.name))
    .map((x) => x.n);
}

/** The canary wave: open for its remaining slots, closed while it runs or soaks, undefined once passed. */
function canaryGate(
  ctx: NodeOpContext,
  standing: ReadonlyMap<string, Standing>,
  running: number,
): NodeOpGate | undefined {
  const canary = ctx.op.rollout.canary;
  if (canary === undefined || canary.nodes <= 0) return undefined;
  const done = doneNodes(ctx, standing);
  const wave = Math.min(canary.nodes, ctx.nodes.length);
  if (done.length + running < wave) return { open: true, limit: wave - done.length - running };
  if (done.length < wave)
    return {
      open: false,
      code: 'soak',
      reason: `canary wave: ${done.length} of ${wave} node(s) done; the rest wait for it`,
    };
  let until = ctx.now;
  for (const node of done.slice(0, wave)) {
    if (!node.ready)
      return { open: false, code: 'soak', reason: `canary node ${node.name} is not Ready; the rest wait` };
    const from = Math.max(parseInstant(node.annotations[ANNOTATIONS.doneAt]) ?? 0, parseInstant(node.readySince) ?? 0);
    until = Math.max(until, from + canary.soakSeconds * 1000);
  }
  if (until > ctx.now)
    return {
      open: false,
      code: 'soak',
      reason: `canary wave soaking for ${canary.soakSeconds}s, until ${new Date(until).toISOString()}`,
      until,
    };
  return undefined;
}

/** Whether new nodes may start now, and how many at most (the canary's share). */
export function nodeOpStartGate(
  ctx: NodeOpContext,
  standing: ReadonlyMap<string, Standing>,
  running: number,
): NodeOpGate {
  const { op, desired, spec } = ctx;
  const closed = windowGate(desired.maintenanceWindows, op.rollout.window, ctx.now);
  if (closed !== undefined) return { open: false, ...closed };
  const required = op.rollout.approval.required;
  if (required === 'start' && findNodeOpApproval(desired, op, spec, 'start') === undefined)
    return { open: false, code: 'approval', ...nodeOpApprovalNeeded(desired.config, op, spec, 'start') };
  const canary = canaryGate(ctx, standing, running);
  if (canary !== undefined) return canary;
  if (required === 'afterCanary' && findNodeOpApproval(desired, op, spec, 'afterCanary') === undefined)
    return { open: false, code: 'approval', ...nodeOpApprovalNeeded(desired.config, op, spec, 'afterCanary') };
  return { open: true };
}
