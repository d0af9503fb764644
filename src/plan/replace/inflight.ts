/**
 * One started node's way through a replace rollout, one step per round, every step derived
 * from annotations and cloud state alone:
 *
 *   Pending ─ replacement claimed ─ joined ─ healthy (labels copied, marked Done)
 *     ─ pre-flight ok ─ Cordoned ─ Draining ─ drained ─ instance and Node removed
 *
 * (With pods to move, the cordon is written with Draining, not Cordoned, and the first evictions
 * follow in the same round.)
 *
 * plus the ways out: a replacement that never joins (removed, counted as a failure), a drain
 * that times out (halt, force or skipNode). What older rounds or revisions left behind is
 * settled in settle.ts; how failures are counted, in failure.ts.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { drainView, preflight } from '../drain.js';
import { drainRound } from '../sequence/drain-step.js';
import { setPhase } from '../sequence/phase.js';
import { readyAt, type HealthCheck } from '../health.js';
import { labelsToCopy, parseInstant, replacementRecord } from '../protocol.js';
import { replacementOf, since, type Entry, type RolloutContext } from './context.js';
import { and, type Decided, type Settled } from './tally.js';
import { evictedBack, evictedRecord } from './evicted.js';
import { fail, gateFailed, skip } from './failure.js';
import { failedNodeHalts, skippedWait } from '../outcome.js';
import { replaceGates } from './gates.js';
import { podsOn } from '../view.js';

/** Moves a current-revision node one step on; what it decided goes back to the round. */
export function advance(ctx: RolloutContext, settled: Settled, e: Entry): Decided {
  const { b, spec } = ctx;
  const node = e.node;
  if (node === undefined) return {};
  const state = ctx.view.stateOf(node);
  const phase = state.phase;
  if (phase === 'Failed') {
    const reason = state.reason ?? 'failed (no reason recorded)';
    const halting = failedNodeHalts(ctx.image.rollout, state);
    b.wait(
      spec,
      halting ? 'halted' : 'failed',
      `${node.name} failed: ${reason}; it stays as it is until a person looks (remove its drydock.dev/ annotations to retry it)`,
      { node: node.name },
    );
    const what = `${node.name}: ${reason}`;
    return {
      failures: Math.max(1, state.failures),
      message: reason,
      lastError: what,
      failed: node.name,
      ...(halting ? { halt: what } : {}),
    };
  }
  const recorded: Decided = { failures: state.failures };
  if (phase === 'Skipped') {
    // Given back by drain.onTimeout skipNode: no failure, nothing in flight; the rollout went on.
    b.wait(spec, 'skipped', skippedWait(node.name, state), { node: node.name });
    return and(recorded, { message: state.reason ?? 'skipped (no reason recorded)' });
  }
  const step =
    phase === 'Cordoned' || phase === 'Draining' || phase === 'Verifying'
      ? drainStep(ctx, e, node, phase)
      : pendingStep(ctx, settled, e, node);
  return and(and(recorded, { inFlight: true }), step);
}

function pendingStep(ctx: RolloutContext, settled: Settled, e: Entry, node: ObservedNode): Decided {
  const { b, spec, now, image } = ctx;
  const id = replacementOf(e) ?? settled.reclaimed.get(node.name);
  if (id === undefined) return { needsReplacement: true };
  const inst = e.group.byId.get(id);
  if (inst === undefined) {
    const reason = `${node.name}: replacement ${id} is gone from the group; a new one will be made`;
    b.act({
      kind: 'annotateNode',
      spec,
      node: node.name,
      annotations: { [ANNOTATIONS.replacedBy]: null, [ANNOTATIONS.phaseSince]: ctx.nowIso },
      reason,
    });
    b.note(spec, reason, node.name);
    return {};
  }
  const rn = ctx.view.nodeByProviderID.get(inst.providerID);
  // Marked (replaces=<old instance>, written in one patch with the Done lock): from then on the
  // new node is free. Another operation may take it, cordon it, even reboot it (NotReady for a
  // while): the rollout goes on with the old node, never judging the new one again or writing
  // over that operation's lock. Taken before it was marked, it is judged once that one is done.
  const marked = rn?.annotations[ANNOTATIONS.replaces] === e.instance.id;
  const holder = rn !== undefined ? heldBy(ctx, rn) : undefined;
  if (rn !== undefined && holder !== undefined) {
    if (marked) return cordonStep(ctx, e, node);
    b.wait(
      spec,
      'lock',
      `replacement ${rn.name} of ${node.name} is held by ${holder}; it is checked and marked once that operation is done`,
      { node: node.name },
    );
    return {};
  }
  if (rn === undefined || !rn.ready) {
    const created = parseInstant(inst.createdAt) ?? now;
    const deadline = created + image.rollout.joinTimeoutSeconds * 1000;
    if (now >= deadline) {
      // The failure is written first: should drydock stop before the removal, the instance
      // is an unclaimed stray past its deadline, which the next round removes (surge.ts).
      const why = `replacement ${inst.id} did not join within ${image.rollout.joinTimeoutSeconds}s`;
      const failed = fail(ctx, node, why, { [ANNOTATIONS.replacedBy]: null });
      b.removeInstance(spec, e.group.group.groupId, inst.id, rn?.name, `${node.name}: ${why}`);
      return failed;
    }
    b.wait(
      spec,
      'join',
      `replacement ${inst.id} of ${node.name} has not joined and become Ready yet (gives up at ${new Date(deadline).toISOString()})`,
      {
        node: node.name,
        until: deadline,
      },
    );
    return {
      pending: {
        groupId: e.group.group.groupId,
        instanceId: inst.id,
        providerID: inst.providerID,
        goal: 'Join',
        deadline: new Date(deadline).toISOString(),
        ...(rn ? { nodeName: rn.name } : {}),
      },
    };
  }
  if (marked) return cordonStep(ctx, e, node);
  const health = markReplacement(ctx, settled, e, node, rn);
  return health === 'marked' ? cordonStep(ctx, e, node) : health;
}

/**
 * The replacement's health gate; once passed, it takes the old node's labels and is marked Done
 * ('marked'). Otherwise what the gate decided: a wait, or a failure past its timeout.
 */
function markReplacement(
  ctx: RolloutContext,
  settled: Settled,
  e: Entry,
  node: ObservedNode,
  rn: ObservedNode,
): Decided | 'marked' {
  const { b, spec, now, image } = ctx;
  const health = readyAt(ctx.view, rn, image.rollout.healthGate.minReadySeconds, now);
  const timedOut = healthTimedOut(ctx, settled, e, node, rn, health);
  if (timedOut !== undefined) return timedOut;
  if (health.blocker !== undefined) {
    b.wait(spec, 'health', `replacement ${rn.name} of ${node.name}: ${health.blocker} yet`, { node: node.name });
    return {};
  }
  if (health.at > now) {
    b.wait(
      spec,
      'health',
      `replacement ${rn.name} of ${node.name} must stay Ready for ${image.rollout.healthGate.minReadySeconds}s (with its pods)`,
      { node: node.name, until: health.at },
    );
    return {};
  }
  const labels = labelsToCopy(node, rn);
  const ready = `replacement ${rn.name} of ${node.name} is Ready and healthy`;
  if (Object.keys(labels).length > 0)
    b.act({
      kind: 'copyLabels',
      spec,
      from: node.name,
      to: rn.name,
      labels,
      reason: `${ready}; it takes over ${node.name}'s labels`,
    });
  markDone(ctx, e, rn, `${ready}; marked Done as the node replacing ${e.instance.id}`);
  return 'marked';
}

/**
 * The replacement's Done mark, in its own lane: it goes out beside the old node's cordon, not
 * before it. Should it not be written (a failed call, drydock stopped), the old node's drain
 * writes it again (remarked), and its instance is not removed before it is.
 */
function markDone(ctx: RolloutContext, e: Entry, rn: ObservedNode, reason: string): void {
  ctx.b.act({
    kind: 'annotateNode',
    spec: ctx.spec,
    node: rn.name,
    annotations: {
      [ANNOTATIONS.replaces]: e.instance.id,
      [ANNOTATIONS.operation]: ctx.lock,
      [ANNOTATIONS.phase]: 'Done',
      [ANNOTATIONS.phaseSince]: ctx.nowIso,
      // The rollout's own record of it, which no other operation on the node writes over.
      ...replacementRecord(ctx.image.name, ctx.image.revision, ctx.nowIso),
    },
    reason,
  });
}

/** Who holds a replacement (another operation's lock, or one taken this round), if anyone does. */
function heldBy(ctx: RolloutContext, rn: ObservedNode): string | undefined {
  const state = ctx.view.stateOf(rn);
  if (!state.holds && !ctx.b.taken.has(rn.name)) return undefined;
  return state.lockText ?? 'an operation that took it this round';
}

/**
 * A cordoned node's replacement still without its Done mark (written beside the cordon, it did
 * not land): written again, or, while another operation holds the replacement, waited for.
 * 'marked' when the mark is there, or there is no replacement of this revision's to mark.
 */
function remarked(ctx: RolloutContext, e: Entry, node: ObservedNode): 'marked' | 'waiting' {
  const id = replacementOf(e);
  const inst = id === undefined ? undefined : e.group.byId.get(id);
  const rn = inst === undefined ? undefined : ctx.view.nodeByProviderID.get(inst.providerID);
  if (rn === undefined) return 'marked';
  if (rn.annotations[ANNOTATIONS.replaces] === e.instance.id) {
    // The labels go with the mark but in another lane (markReplacement): a stop between the two
    // leaves a marked replacement without them, and they are copied here, before the removal in
    // the node's lane (a failed copy holds it), while the old node still has them.
    const labels = labelsToCopy(node, rn);
    if (Object.keys(labels).length > 0)
      ctx.b.act({
        kind: 'copyLabels',
        spec: ctx.spec,
        from: node.name,
        to: rn.name,
        labels,
        reason: `replacement ${rn.name} of ${node.name} is marked Done without all of its labels; copied again`,
      });
    return 'marked';
  }
  // A node adopted from a revision no longer desired is finished as it is: its replacement runs
  // another image, and this revision's mark would say it was this rollout's.
  if (inst?.image !== ctx.image.image) return 'marked';
  const holder = heldBy(ctx, rn);
  if (holder !== undefined) {
    ctx.b.wait(
      ctx.spec,
      'lock',
      `replacement ${rn.name} of ${node.name} is held by ${holder}; it is marked Done once that operation is done, and ${node.name} stays until then`,
      { node: node.name },
    );
    return 'waiting';
  }
  markDone(ctx, e, rn, `${node.name} is cordoned but its replacement ${rn.name} has no Done mark yet; marked again`);
  return 'waiting';
}

/**
 * healthGate.timeout: a replacement that has not passed the gate this long after it joined
 * (its Node was created) is removed and counted as a failure of the old node, which stays in
 * service; stopOnFailure then halts the rollout.
 */
function healthTimedOut(
  ctx: RolloutContext,
  settled: Settled,
  e: Entry,
  node: ObservedNode,
  rn: ObservedNode,
  health: HealthCheck,
): Decided | undefined {
  const limit = ctx.image.rollout.healthGate.timeoutSeconds;
  if (limit === undefined) return undefined;
  const deadline = (parseInstant(rn.createdAt) ?? ctx.now) + limit * 1000;
  if (ctx.now < deadline || (health.blocker === undefined && health.at <= ctx.now)) return undefined;
  const what = health.blocker ?? `it has not stayed Ready for ${ctx.image.rollout.healthGate.minReadySeconds}s`;
  const why = `replacement ${rn.name} did not pass the health gate within ${limit}s (${what})`;
  const id = replacementOf(e) ?? settled.reclaimed.get(node.name);
  const failed = fail(ctx, node, why, { [ANNOTATIONS.replacedBy]: null });
  if (id !== undefined) ctx.b.removeInstance(ctx.spec, e.group.group.groupId, id, rn.name, `${node.name}: ${why}`);
  return failed;
}

function cordonStep(ctx: RolloutContext, e: Entry, node: ObservedNode): Decided {
  const { b, spec } = ctx;
  const drain = drainView(podsOn(ctx.view, node.name), ctx.image.rollout.drain);
  const blocked = preflight(ctx.view, drain);
  if (blocked !== undefined) {
    b.wait(spec, blocked.code, `${node.name} not cordoned: ${blocked.reason}`, { node: node.name });
    return { message: blocked.reason };
  }
  if (!ctx.budget.canTakeDown()) {
    b.wait(spec, 'budget', `${node.name} not cordoned: ${ctx.budget.describe()}`, { node: node.name });
    return {};
  }
  const gate = replaceGates(ctx, e, node, 'before');
  if (gate.kind === 'waiting') return {};
  if (gate.kind === 'failed') return gateFailed(ctx, node, gate);
  ctx.budget.takeDown();
  const round = drainRound({
    spec,
    node,
    view: ctx.view,
    policy: ctx.image.rollout.drain,
    started: undefined,
    now: ctx.now,
  });
  // The phase before the cordon, in one patch with it (the executor pairs them): Draining with
  // what the drain moves when there are pods to move, else Cordoned, and the next round takes
  // the drain on. Written alone (a node already cordoned by someone), it still comes first.
  const moving = round.kind === 'moving';
  b.act({
    kind: 'annotateNode',
    spec,
    node: node.name,
    annotations: {
      [ANNOTATIONS.phase]: moving ? 'Draining' : 'Cordoned',
      [ANNOTATIONS.phaseSince]: ctx.nowIso,
      ...evictedRecord(ctx, node),
    },
    reason: moving
      ? `${node.name}'s replacement is Ready; it is cordoned and its drain starts`
      : `${node.name}'s replacement is Ready; it is cordoned before its drain`,
  });
  if (!node.unschedulable)
    b.act({
      kind: 'cordon',
      spec,
      node: node.name,
      reason: `${node.name}'s replacement is Ready; no new pods go to it`,
    });
  if (round.kind !== 'moving') return {};
  // The first evictions after the patch, in the node's lane: a failed write holds them, so no
  // pod is evicted from a node still schedulable. The drain's timeout runs from this round.
  for (const a of round.actions) b.act(a);
  b.wait(spec, round.wait.code, round.wait.reason, { node: node.name });
  return {};
}

/** Draining, from the time of this round: the drain's timeout runs from it. */
function enterDraining(ctx: RolloutContext, node: ObservedNode): void {
  setPhase(ctx, node, 'Draining', `${node.name} is cordoned; its drain starts`);
}

function drainStep(
  ctx: RolloutContext,
  e: Entry,
  node: ObservedNode,
  phase: 'Cordoned' | 'Draining' | 'Verifying',
): Decided {
  const { b, spec, now, image } = ctx;
  const policy = image.rollout.drain;
  if (!node.unschedulable)
    b.act({
      kind: 'cordon',
      spec,
      node: node.name,
      reason: `${node.name} is ${phase} but schedulable; cordoned again`,
    });
  const leaving: Decided = {
    pending: {
      groupId: e.group.group.groupId,
      instanceId: e.instance.id,
      providerID: e.instance.providerID,
      goal: 'Leave',
      nodeName: node.name,
    },
  };
  let started = since(ctx, node);
  if (phase === 'Cordoned') {
    enterDraining(ctx, node);
    started = now;
  }
  const drain = drainRound({ spec, node, view: ctx.view, policy, started, now, actingSince: ctx.options.actingSince });
  // Its replacement's mark first: the instance is never removed while the node replacing it is unmarked.
  const mark = remarked(ctx, e, node);
  if (drain.kind === 'drained') return mark === 'marked' ? and(leaving, drained(ctx, e, node, phase)) : leaving;
  if (drain.kind === 'ended') {
    if (drain.outcome === 'skipped') return and(leaving, skip(ctx, node, drain.reason));
    return and(and(leaving, { halt: `${node.name}: ${drain.cause}` }), fail(ctx, node, drain.reason, {}, 'halted'));
  }
  for (const a of drain.actions) b.act(a);
  b.wait(spec, drain.wait.code, drain.wait.reason, {
    node: node.name,
    ...(drain.wait.until !== undefined ? { until: drain.wait.until } : {}),
  });
  return leaving;
}

/** A drained node: its workloads back elsewhere, its after-gates passed, then its instance removed. */
function drained(ctx: RolloutContext, e: Entry, node: ObservedNode, phase: string): Decided {
  const back = evictedBack(ctx, node, phase === 'Verifying');
  if (back.kind === 'failed') return gateFailed(ctx, node, back);
  if (back.kind !== 'back') return {};
  // UpgradeGate after-Jobs run once the node is drained and replaced, before it is removed.
  const gate = replaceGates(ctx, e, node, 'after');
  if (gate.kind === 'failed') return gateFailed(ctx, node, gate);
  if (gate.kind !== 'passed') return {};
  const { b, spec } = ctx;
  b.removeInstance(spec, e.group.group.groupId, e.instance.id, node.name, `${node.name} is drained and replaced`);
  return {
    finished: { node: node.name, unavailable: ctx.view.stateOf(node).unavailable, own: e.group.group.groupId },
  };
}
