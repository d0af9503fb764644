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
import { ownership, type Entry, type RolloutContext } from './context.js';
import { inFlightTotal, type Settled, type Tally } from './tally.js';

export function windowOf(ctx: RolloutContext): MaintenanceWindow | undefined {
  const name = ctx.image.rollout.window;
  return name === undefined ? undefined : ctx.desired.maintenanceWindows.find((w) => w.name === name);
}

/** Whether new nodes may start now, and how many at most (the canary's share): the shared gate. */
export function startGate(ctx: RolloutContext, tally: Tally, gates: StartGates): StartGate {
  const halt = tally.haltReason;
  return sharedStartGate({
    desired: ctx.desired,
    rollout: ctx.image.rollout,
    approval: imageTarget(ctx.image),
    canary: canaryProgress(ctx, inFlightTotal(tally)),
    ...(halt !== undefined ? { halted: haltedReason(halt, 'NodeImage') } : {}),
    ...(ctx.image.paused !== undefined ? { paused: ctx.image.paused } : {}),
    gates,
    now: ctx.now,
    status: { spec: ctx.spec, revision: ctx.image.revision },
  });
}

/** Nodes that could start: outdated, joined, held by nobody, in the first tier with work left. */
export function candidates(ctx: RolloutContext, settled: Settled): Entry[] {
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
      !settled.released.has(e.node.name) &&
      !ctx.view.claimed.has(e.instance.id) &&
      !settled.abandoned.has(e.instance.id) &&
      ownership(ctx, e.node) !== 'current' &&
      ownership(ctx, e.node) !== 'stale',
  );
}

/** What the start stage decided: the gate it went by (open when nothing could start), and the nodes it started. */
export interface Started {
  readonly gate: StartGate;
  /** Locked Pending this round, in rollout order: each needs a replacement instance. */
  readonly started: readonly Entry[];
}

/** The gate for starting one of `list`: controlPlaneFirst's order, then the shared gate. */
function gateFor(ctx: RolloutContext, tally: Tally, gates: StartGates, list: readonly Entry[]): StartGate {
  return gates.controlPlane !== undefined &&
    ctx.image.rollout.order === 'controlPlaneFirst' &&
    list.every((e) => e.group.sg.role !== 'control-plane')
    ? { open: false, code: 'order', reason: gates.controlPlane }
    : startGate(ctx, tally, gates);
}

/**
 * With nothing to start or in flight in the groups already on the image: the gate the nodes of
 * groups whose image is set this round will meet, its wait recorded when it holds them. The
 * round that only sets a group's image then says what holds the rollout (a fleet's earlier
 * stage, a window, an approval), not that it is under way.
 */
function upcomingGate(ctx: RolloutContext, tally: Tally, gates: StartGates): StartGate {
  const next = ctx.upcoming.filter((e) => e.outdated && e.node !== undefined && !ctx.view.claimed.has(e.instance.id));
  if (next.length === 0 || inFlightTotal(tally) > 0) return { open: true };
  const gate = gateFor(ctx, tally, gates, next);
  if (!gate.open) ctx.b.wait(ctx.spec, gate.code, gate.reason, gateWait(gate));
  return gate;
}

/** Starts what the gate and the limits allow. */
export function startNodes(ctx: RolloutContext, settled: Settled, tally: Tally, gates: StartGates): Started {
  const { b, spec, image } = ctx;
  const list = candidates(ctx, settled);
  const started: Entry[] = [];
  if (list.length === 0) return { gate: upcomingGate(ctx, tally, gates), started };
  const gate = gateFor(ctx, tally, gates, list);
  if (!gate.open) {
    b.wait(spec, gate.code, gate.reason, gateWait(gate));
    return { gate, started };
  }
  const slots = new StartSlots(image.rollout, inFlightTotal(tally), gate.limit, ctx.budget, tally.handOvers);
  const groupSlots = new Map<string, number>();
  for (const g of ctx.groups)
    groupSlots.set(g.group.groupId, g.parallelism - (tally.inFlight.get(g.group.groupId) ?? 0));
  for (const e of list) {
    const node = e.node;
    if (node === undefined) continue;
    const other = ownership(ctx, node) === 'foreign' ? ctx.view.stateOf(node) : undefined;
    const held = heldElsewhere(ctx.desired, b, node, other, 'it is replaced');
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
    const taken = slots.take(surge, groupId);
    if (taken === undefined) continue;
    b.taken.add(node.name);
    // A slot handed over by a node of the same group frees its group's share too.
    if (taken.from?.own !== groupId) groupSlots.set(groupId, room - 1);
    const lock = () =>
      b.act({
        kind: 'annotateNode',
        spec,
        node: node.name,
        annotations: {
          [ANNOTATIONS.operation]: ctx.lock,
          [ANNOTATIONS.phase]: 'Pending',
          [ANNOTATIONS.phaseSince]: ctx.nowIso,
          // The Job a NodeOp done here left for its status row is not this one's: with it, the
          // lock would read as an in-place hold (protocol.ts inPlaceHold), which the NodeOp
          // machinery releases as a NodeImage no longer inPlace, orphaning its surge.
          [ANNOTATIONS.job]: null,
          [ANNOTATIONS.jobMessage]: null,
        },
        reason: `${node.name} runs ${e.instance.image}; locked for its replacement by ${image.image}`,
      });
    if (taken.after !== undefined) b.inLaneOf(taken.after, lock);
    else lock();
    started.push(e);
  }
  slots.report(b, spec);
  return { gate, started };
}
