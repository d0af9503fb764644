/**
 * Replacement instances for started nodes. New-image instances nobody has claimed yet are
 * handed to started nodes lacking a replacement, oldest instance to first node; only then is
 * new capacity asked for. This is what makes surge crash-safe: instances surged just before a
 * crash are simply claimed in the next round (an instance counts as a node's surge only if it
 * was created after the node was started, so established nodes are never taken).
 */
import type { Instance } from '../../cloud/provider.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { compareStrings } from '../order.js';
import { parseInstant } from '../protocol.js';
import { since, type Entry, type GroupState, type RolloutContext } from './context.js';

function lockedAt(ctx: RolloutContext, e: Entry, startedNow: ReadonlySet<string>): number {
  if (e.node === undefined || startedNow.has(e.node.name)) return ctx.now;
  return since(ctx, e.node);
}

/**
 * Replacements in flight in a group: claimed by a node still being replaced. A node whose
 * instance this round removes (`finishing`) no longer counts: its removal runs before any surge
 * of the round, and a group whose removal fails gets no new instance that round (the executor).
 */
function claimedInFlight(ctx: RolloutContext, g: GroupState, finishing: ReadonlySet<string>): number {
  let n = 0;
  for (const e of ctx.entries) {
    if (e.group !== g || e.node === undefined || finishing.has(e.node.name)) continue;
    const { holds, settled } = ctx.view.stateOf(e.node);
    if (!holds || settled) continue;
    const id = e.node.annotations[ANNOTATIONS.replacedBy];
    if (id !== undefined && g.byId.has(id)) n++;
  }
  return n;
}

/**
 * Claims or surges a replacement for each node that needs one: those found Pending without one
 * (`needers`, from the advance stage), then those started this round (`started`). `finishing`
 * are the nodes whose instances this round removes.
 */
export function claimAndSurge(
  ctx: RolloutContext,
  needers: readonly Entry[],
  started: readonly Entry[],
  finishing: ReadonlySet<string>,
): void {
  const { view, image } = ctx;
  const startedNow = new Set(started.flatMap((e) => (e.node !== undefined ? [e.node.name] : [])));
  const all = [...needers, ...started];
  for (const g of ctx.groups) {
    const orphans = [...g.byId.values()]
      .filter((inst) => {
        if (inst.image !== image.image || view.claimed.has(inst.id)) return false;
        const node = view.nodeByProviderID.get(inst.providerID);
        return node === undefined || node.annotations[ANNOTATIONS.replaces] === undefined;
      })
      .map((inst) => ({ inst, created: parseInstant(inst.createdAt) ?? Number.NEGATIVE_INFINITY }))
      .sort((x, y) => x.created - y.created || compareStrings(x.inst.id, y.inst.id));
    removeStrays(ctx, g, orphans);
    claimOrSurge(
      ctx,
      g,
      all.filter((e) => e.group === g),
      orphans,
      { startedNow, finishing },
    );
  }
}

/** One group's share: unclaimed new instances go to the oldest locks first, then new capacity. */
function claimOrSurge(
  ctx: RolloutContext,
  g: GroupState,
  needers: readonly Entry[],
  orphans: { inst: Instance; created: number }[],
  { startedNow, finishing }: { readonly startedNow: ReadonlySet<string>; readonly finishing: ReadonlySet<string> },
): void {
  const { b, spec, image } = ctx;
  if (needers.length === 0) return;
  const unserved: Entry[] = [];
  for (const e of needers) {
    const from = lockedAt(ctx, e, startedNow) - ctx.options.skewMs;
    const i = orphans.findIndex((o) => o.created >= from);
    const node = e.node;
    const found = orphans[i];
    if (found === undefined || node === undefined) {
      unserved.push(e);
      continue;
    }
    orphans.splice(i, 1);
    const reason = `${node.name} needs a replacement; ${found.inst.id} runs ${image.image} and nobody claims it`;
    b.act({
      kind: 'annotateNode',
      spec,
      node: node.name,
      annotations: { [ANNOTATIONS.replacedBy]: found.inst.id },
      reason,
    });
  }
  if (unserved.length === 0) return;
  // Unclaimed new instances younger than the oldest started node are surges on their way
  // to a claim; counting them keeps a crash from surging twice.
  const oldestLock = Math.min(...needers.map((e) => lockedAt(ctx, e, startedNow))) - ctx.options.skewMs;
  const inFlight = claimedInFlight(ctx, g, finishing) + orphans.filter((o) => o.created >= oldestLock).length;
  const count = Math.min(unserved.length, g.maxSurge - inFlight);
  if (count > 0) {
    const forNodes = unserved.slice(0, count).flatMap((e) => (e.node ? [e.node.name] : []));
    b.act({
      kind: 'surge',
      spec,
      groupId: g.group.groupId,
      count,
      forNodes,
      reason: `new instance(s) on ${image.image} to replace ${forNodes.join(', ')}`,
    });
  }
  if (unserved.length > count) {
    b.wait(
      spec,
      'surge',
      `${unserved.length - Math.max(0, count)} started node(s) in ScalingGroup ${g.sg.name} wait for a replacement instance (maxSurge ${g.maxSurge}, ${inFlight} in flight)`,
    );
  }
}

/**
 * An unclaimed new-image instance that has not become a Ready node within joinTimeout of its
 * creation is broken (or a replacement whose removal was cut short): it is removed, like a
 * claimed one would be. Removed from `orphans` so nobody claims it this round.
 */
function removeStrays(ctx: RolloutContext, g: GroupState, orphans: { inst: Instance; created: number }[]): void {
  const timeout = ctx.image.rollout.joinTimeoutSeconds * 1000;
  for (let i = orphans.length - 1; i >= 0; i--) {
    const o = orphans[i];
    if (o === undefined || o.created + timeout > ctx.now) continue;
    const node = ctx.view.nodeByProviderID.get(o.inst.providerID);
    // A node another operation holds (a NodeOp rebooting it is NotReady for a while) is left
    // until that operation is done with it.
    if (node?.ready === true || (node !== undefined && ctx.view.stateOf(node).holds)) continue;
    orphans.splice(i, 1);
    const reason = `instance ${o.inst.id} did not join within ${ctx.image.rollout.joinTimeoutSeconds}s and no node claims it; removed`;
    ctx.b.removeInstance(ctx.spec, g.group.groupId, o.inst.id, node?.name, reason);
    ctx.b.note(ctx.spec, reason);
  }
}
