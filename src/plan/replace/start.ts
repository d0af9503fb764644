/**
 * Starting nodes: the gates a rollout passes before it may lock a new node (halt, the
 * autoscaler, the maintenance window, approvals, the canary wave), then the limits
 * (concurrency, the group's surge/unavailable share, the cluster budget) in rollout order.
 * A started node is locked Pending; its replacement instance is claimed or surged afterwards.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import type { MaintenanceWindow } from '../../spec/model.js';
import { approvalNeeded, findApproval } from '../approval.js';
import { waitExtra } from '../builder.js';
import type { ApprovalWanted } from '../types.js';
import { canaryState } from './canary.js';
import { maintenanceOn } from '../maintenance/index.js';
import { addInFlight, inFlightTotal, ownership, type Entry, type RolloutContext } from './context.js';
import { windowGate } from '../window.js';
import { plural } from '../../words.js';

export interface StartGates {
  /** Set when the cluster-autoscaler is not paused yet. */
  readonly autoscaler?: string;
  /**
   * Set when another spec still has a control-plane node on an old image: under
   * controlPlaneFirst no worker of any spec starts before the whole control plane is done.
   */
  readonly controlPlane?: string;
}

export type GateResult =
  | { readonly open: true; readonly limit?: number }
  | {
      readonly open: false;
      readonly code: 'halted' | 'autoscaler' | 'order' | 'window' | 'approval' | 'soak';
      readonly reason: string;
      readonly until?: number;
      readonly approval?: ApprovalWanted;
    };

export function windowOf(ctx: RolloutContext): MaintenanceWindow | undefined {
  const name = ctx.image.rollout.window;
  return name === undefined ? undefined : ctx.desired.maintenanceWindows.find((w) => w.name === name);
}

/** Whether new nodes may start now, and how many at most (the canary's share). */
export function startGate(ctx: RolloutContext, gates: StartGates): GateResult {
  const { image } = ctx;
  if (ctx.round.haltReason !== undefined) {
    return {
      open: false,
      code: 'halted',
      reason: `rollout halted: ${ctx.round.haltReason}; fix the cause, then remove the node's drydock.dev/ annotations or change the NodeImage to retry`,
    };
  }
  if (gates.autoscaler !== undefined) return { open: false, code: 'autoscaler', reason: gates.autoscaler };
  const closed = windowGate(ctx.desired.maintenanceWindows, image.rollout.window, ctx.now);
  if (closed !== undefined) return { open: false, ...closed };
  const required = image.rollout.approval.required;
  if (required === 'start' && findApproval(ctx.desired, image, 'start') === undefined) {
    return { open: false, code: 'approval', ...approvalNeeded(ctx.desired.config, image, 'start') };
  }
  const canary = canaryState(ctx, inFlightTotal(ctx));
  if (canary.stage === 'starting') return { open: true, limit: canary.slots };
  if (canary.stage === 'waiting')
    return {
      open: false,
      code: 'soak',
      reason: canary.reason,
      ...(canary.until !== undefined ? { until: canary.until } : {}),
    };
  if (required === 'afterCanary' && findApproval(ctx.desired, image, 'afterCanary') === undefined) {
    return { open: false, code: 'approval', ...approvalNeeded(ctx.desired.config, image, 'afterCanary') };
  }
  return { open: true };
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
export function startNodes(ctx: RolloutContext, gates: StartGates): GateResult {
  const { b, spec, image } = ctx;
  const list = candidates(ctx);
  if (list.length === 0) return { open: true };
  const gate: GateResult =
    gates.controlPlane !== undefined &&
    ctx.image.rollout.order === 'controlPlaneFirst' &&
    list.every((e) => e.group.sg.role !== 'control-plane')
      ? { open: false, code: 'order', reason: gates.controlPlane }
      : startGate(ctx, gates);
  if (!gate.open) {
    b.wait(spec, gate.code, gate.reason, waitExtra(gate));
    return gate;
  }
  const concurrency = image.rollout.concurrency > 0 ? image.rollout.concurrency : Number.POSITIVE_INFINITY;
  const concurrencySlots = concurrency - inFlightTotal(ctx);
  let specSlots = Math.min(concurrencySlots, gate.limit ?? Number.POSITIVE_INFINITY);
  const groupSlots = new Map<string, number>();
  for (const g of ctx.groups)
    groupSlots.set(g.group.groupId, g.parallelism - (ctx.round.inFlight.get(g.group.groupId) ?? 0));
  let waiting = 0;
  let limitWait: { code: 'concurrency' | 'budget' | 'surge' | 'soak'; reason: string } | undefined;
  for (const e of list) {
    const node = e.node;
    if (node === undefined) continue;
    if (ownership(ctx, node) === 'foreign') {
      b.wait(
        spec,
        'lock',
        `${node.name} is held by ${node.annotations[ANNOTATIONS.operation] ?? '?'} (phase ${node.annotations[ANNOTATIONS.phase] ?? 'unknown'}); it is replaced once that operation is done`,
        {
          node: node.name,
        },
      );
      continue;
    }
    const maintenance = maintenanceOn(ctx.desired, node.name);
    if (maintenance !== undefined) {
      b.wait(
        spec,
        'lock',
        `${node.name} is in NodeMaintenance ${maintenance.name}; it is replaced once the maintenance ends`,
        { node: node.name },
      );
      continue;
    }
    if (b.taken.has(node.name)) {
      b.wait(
        spec,
        'lock',
        `${node.name} was taken by another operation this round; it is replaced once that one is done`,
        {
          node: node.name,
        },
      );
      continue;
    }
    const groupId = e.group.group.groupId;
    const room = groupSlots.get(groupId) ?? 0;
    if (specSlots <= 0) {
      limitWait ??=
        gate.limit !== undefined && gate.limit < concurrencySlots
          ? { code: 'soak', reason: `the canary wave of ${image.rollout.canary?.nodes ?? 0} node(s) goes first` }
          : {
              code: 'concurrency',
              reason: `concurrency limit reached: ${plural(image.rollout.concurrency, 'node')} in flight at once`,
            };
      waiting++;
      continue;
    }
    if (room <= 0) {
      limitWait ??= {
        code: 'surge',
        reason: `ScalingGroup ${e.group.sg.name} has ${e.group.parallelism} node(s) in flight, its limit (maxSurge ${String(image.rollout.maxSurge)}, maxUnavailable ${String(image.rollout.maxUnavailable)})`,
      };
      waiting++;
      continue;
    }
    if (ctx.budget.free <= 0) {
      limitWait ??= { code: 'budget', reason: ctx.budget.describe() };
      waiting++;
      continue;
    }
    ctx.budget.reserve();
    b.taken.add(node.name);
    specSlots--;
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
  if (waiting > 0 && limitWait !== undefined)
    b.wait(spec, limitWait.code, `${waiting} node(s) queued: ${limitWait.reason}`);
  return gate;
}
