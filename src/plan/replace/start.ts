/**
 * Starting nodes: the gates a rollout passes before it may lock a new node (halt, the
 * autoscaler, the maintenance window, approvals, the canary wave), then the limits
 * (concurrency, the group's surge/unavailable share, the cluster budget) in rollout order.
 * A started node is locked Pending; its replacement instance is claimed or surged afterwards.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { MaintenanceWindow } from '../../spec/model.js';
import { imageTarget } from '../approval.js';
import { canaryProgress } from './canary.js';
import {
  gateWait,
  haltedReason,
  startGate as sharedStartGate,
  type StartGate,
  type StartGates,
} from '../sequence/start-gate.js';
import { heldElsewhere, StartSlots } from '../sequence/admit.js';
import { addInFlight, inFlightTotal, ownership, type Entry, type RolloutContext } from './context.js';

export function windowOf(ctx: RolloutContext): MaintenanceWindow | undefined {
  const name = ctx.image.rollout.window;
  return name === undefined ? undefined : ctx.desired.maintenanceWindows.find((w) => w.name === name);
}

/** Whether new nodes may start now, and how many at most (the canary's share): the shared gate. */
export function startGate(ctx: RolloutContext, gates: StartGates): StartGate {
  const halt = ctx.round.haltReason;
  return sharedStartGate({
    desired: ctx.desired,
    rollout: ctx.image.rollout,
    approval: imageTarget(ctx.image),
    canary: canaryProgress(ctx, inFlightTotal(ctx)),
    ...(halt !== undefined ? { halted: haltedReason(halt, 'NodeImage') } : {}),
    gates,
    now: ctx.now,
  });
}

/** Nodes that could start: outdated, joined, held by nobody, in the first tier with work left. */
export function candidates(ctx: RolloutContext): Entry[] {
  let tier: number | undefined;
  for (const e of ctx.entries) {
    const busy = e.node !== undefined && ownership(ctx, e.node) === 'current';
    if (e.outdated || busy) {
      tier = e.order.tier;
      break;
    }
  }
  return ctx.entries.filter(
    (e) =>
      e.order.tier === tier &&
      e.outdated &&
      e.node !== undefined &&
      !ctx.round.released.has(e.node.name) &&
      !ctx.view.claimed.has(e.instance.id) &&
      !ctx.round.abandoned.has(e.instance.id) &&
      ownership(ctx, e.node) !== 'current' &&
      ownership(ctx, e.node) !== 'stale',
  );
}

/** Starts what the gate and the limits allow; returns the gate it went by (open when nothing could start). */
export function startNodes(ctx: RolloutContext, gates: StartGates): StartGate {
  const { b, spec, image } = ctx;
  const list = candidates(ctx);
  if (list.length === 0) return { open: true };
  const gate: StartGate =
    gates.controlPlane !== undefined &&
    ctx.image.rollout.order === 'controlPlaneFirst' &&
    list.every((e) => e.group.sg.role !== 'control-plane')
      ? { open: false, code: 'order', reason: gates.controlPlane }
      : startGate(ctx, gates);
  if (!gate.open) {
    b.wait(spec, gate.code, gate.reason, gateWait(gate));
    return gate;
  }
  const slots = new StartSlots(image.rollout, inFlightTotal(ctx), gate.limit, ctx.budget);
  const groupSlots = new Map<string, number>();
  for (const g of ctx.groups)
    groupSlots.set(g.group.groupId, g.parallelism - (ctx.round.inFlight.get(g.group.groupId) ?? 0));
  for (const e of list) {
    const node = e.node;
    if (node === undefined) continue;
    const held = heldElsewhere(ctx.desired, b, node, ownership(ctx, node) === 'foreign', 'it is replaced');
    if (held !== undefined) {
      b.wait(spec, 'lock', held, { node: node.name });
      continue;
    }
    const groupId = e.group.group.groupId;
    const room = groupSlots.get(groupId) ?? 0;
    const surge = () =>
      room > 0
        ? undefined
        : {
            code: 'surge' as const,
            reason: `ScalingGroup ${e.group.sg.name} has ${e.group.parallelism} node(s) in flight, its limit (maxSurge ${String(image.rollout.maxSurge)}, maxUnavailable ${String(image.rollout.maxUnavailable)})`,
          };
    if (!slots.take(surge)) continue;
    b.taken.add(node.name);
    groupSlots.set(groupId, room - 1);
    addInFlight(ctx, groupId);
    b.act({
      kind: 'annotateNode',
      spec,
      node: node.name,
      annotations: {
        [ANNOTATIONS.operation]: ctx.lock,
        [ANNOTATIONS.phase]: 'Pending',
        [ANNOTATIONS.phaseSince]: ctx.nowIso,
      },
      reason: `${node.name} runs ${e.instance.image}; locked for its replacement by ${image.image}`,
    });
    ctx.round.needers.push(e);
    ctx.round.startedNow.add(node.name);
  }
  slots.report(b, spec);
  return gate;
}
