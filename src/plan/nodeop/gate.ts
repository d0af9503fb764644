/**
 * When an in-place spec (NodeOp, NodeOpUpgrade, NodeImage inPlace) may start a new node: the
 * shared start gate (sequence/start-gate.ts) with this spec's approval target and canary. The
 * canary is read back from the cluster: the nodes that carry this spec's record, earliest
 * drydock.dev/done-at first.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import { opTarget } from '../approval.js';
import { parseInstant } from '../protocol.js';
import type { CanaryProgress } from '../sequence/canary.js';
import { startGate, type StartGate, type StartGates } from '../sequence/start-gate.js';
import type { NodeOpContext, Standing } from './context.js';

/** The spec's canary as the shared gate reads it: its done nodes and when each was done. */
export function nodeOpCanary(
  ctx: NodeOpContext,
  standing: ReadonlyMap<string, Standing>,
  inFlight: number,
): CanaryProgress {
  const policy = ctx.op.rollout.canary;
  const done = ctx.nodes
    .filter((n) => standing.get(n.name) === 'done')
    .map((node) => ({ node, at: parseInstant(node.annotations[ANNOTATIONS.doneAt]) ?? 0 }));
  return { policy, wave: Math.min(policy?.nodes ?? 0, ctx.nodes.length), done, inFlight, doneWord: 'done' };
}

/** Whether new nodes may start now, and how many at most (the canary's share). */
export function nodeOpStartGate(
  ctx: NodeOpContext,
  standing: ReadonlyMap<string, Standing>,
  inFlight: number,
  outside: Pick<StartGates, 'metrics' | 'fleet' | 'metricHalts'> = {},
): StartGate {
  return startGate({
    desired: ctx.desired,
    rollout: ctx.op.rollout,
    approval: opTarget(ctx.op, ctx.spec),
    canary: nodeOpCanary(ctx, standing, inFlight),
    ...(ctx.op.paused !== undefined ? { paused: ctx.op.paused } : {}),
    // Only the metric gates and the fleet's: an in-place operation does not wait for the
    // autoscaler's pause.
    gates: {
      ...(outside.metrics !== undefined ? { metrics: outside.metrics } : {}),
      ...(outside.fleet !== undefined ? { fleet: outside.fleet } : {}),
      ...(outside.metricHalts !== undefined ? { metricHalts: outside.metricHalts } : {}),
    },
    now: ctx.now,
    status: { spec: ctx.spec, revision: ctx.op.revision },
  });
}
