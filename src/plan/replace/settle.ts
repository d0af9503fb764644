/**
 * Settling what an earlier round or revision left behind in a replace rollout: a lock taken
 * under an older revision of the spec (its node released, its unclaimed replacement removed),
 * and a node that carries drydock's annotations but is no longer in the scaling group.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { parseInstant, HELD_ANNOTATIONS } from '../protocol.js';
import type { SpecRef } from '../types.js';
import { ownership, replacementOf, since, type Entry, type RolloutContext } from './context.js';
import type { Settled } from './tally.js';

/** Releases a node a replace rollout held: uncordoned if drydock cordoned it, its lock cleared, and said. */
export function releaseNode(
  { b, view }: Pick<RolloutContext, 'b' | 'view'>,
  spec: SpecRef,
  node: ObservedNode,
  why: string,
): void {
  const reason = `released ${node.name}: ${why}`;
  if (view.stateOf(node).keptCordoned) b.act({ kind: 'uncordon', spec, node: node.name, reason });
  b.act({ kind: 'annotateNode', spec, node: node.name, annotations: HELD_ANNOTATIONS, reason });
  b.note(spec, reason, node.name);
}

/** What settling one node decided (folded into Settled by settleLocks). */
interface SettleDecision {
  readonly adopted?: boolean;
  readonly released?: boolean;
  /** A surge for a revision no longer desired: removed, or claimed for the node (reclaimed). */
  readonly abandoned?: string;
  readonly reclaimed?: string;
}

function release(ctx: RolloutContext, node: ObservedNode, why: string): SettleDecision {
  releaseNode(ctx, ctx.spec, node, why);
  return { released: true };
}

/**
 * The settle stage of a round: nodes this rollout holds whose instance left the group, then
 * locks of older revisions, in rollout order. Returns what it decided, for the stages after.
 */
export function settleLocks(ctx: RolloutContext): Settled {
  const adopted = new Set<string>();
  const released = new Set<string>();
  const abandoned = new Set<string>();
  const reclaimed = new Map<string, string>();
  if (ctx.blockedGroups === 0) {
    for (const node of ctx.view.observed.nodes) {
      const { holds, lock, inPlaceHold } = ctx.view.stateOf(node);
      if (ctx.entryByNode.has(node.name) || !holds) continue;
      // An in-place hold of the same name (the NodeImage changed strategy) is settled in place.
      if (lock?.kind === 'NodeImage' && lock.name === ctx.image.name && !inPlaceHold)
        if (settleOrphanNode(ctx, node).released === true) released.add(node.name);
    }
  }
  for (const e of ctx.entries) {
    if (e.node === undefined || ownership(ctx, e.node) !== 'stale') continue;
    const d = settleStaleLock(ctx, e, abandoned);
    if (d.adopted === true) adopted.add(e.node.name);
    if (d.released === true) released.add(e.node.name);
    if (d.abandoned !== undefined) abandoned.add(d.abandoned);
    if (d.reclaimed !== undefined) reclaimed.set(e.node.name, d.reclaimed);
  }
  return { adopted, released, abandoned, reclaimed };
}

function removeReplacement(ctx: RolloutContext, e: Entry, id: string, why: string): void {
  const inst = e.group.byId.get(id);
  if (inst === undefined) return;
  const rn = ctx.view.nodeByProviderID.get(inst.providerID);
  ctx.b.removeInstance(
    ctx.spec,
    e.group.group.groupId,
    id,
    rn?.name,
    `replacement ${id} of ${e.node?.name ?? e.instance.id}: ${why}`,
  );
}

/**
 * The instance surged for a stale node whose claim never got written (drydock stopped right
 * after the surge): unclaimed, on an image no longer desired, created after the node was
 * started, and not a finished replacement. The oldest such instance is taken, so two stale
 * nodes never take the same one.
 */
function unclaimedSurgeOf(
  ctx: RolloutContext,
  e: Entry,
  node: ObservedNode,
  abandoned: ReadonlySet<string>,
): string | undefined {
  const from = since(ctx, node) - ctx.options.skewMs;
  let found: { id: string; created: number } | undefined;
  for (const inst of e.group.byId.values()) {
    if (inst.image === ctx.image.image || ctx.view.claimed.has(inst.id) || abandoned.has(inst.id)) continue;
    const created = parseInstant(inst.createdAt);
    if (created === undefined || created < from) continue;
    if (ctx.view.nodeByProviderID.get(inst.providerID)?.annotations[ANNOTATIONS.replaces] !== undefined) continue;
    if (found === undefined || created < found.created || (created === found.created && inst.id < found.id))
      found = { id: inst.id, created };
  }
  return found?.id;
}

/**
 * A lock from an older revision (an edited spec, or an image changed back mid-rollout). A node
 * whose replacement has joined is finished under the new revision (its pods may already run
 * there); so is a still-outdated node whose replacement is on the desired image. Anything else
 * was not yet cordoned: it is released and its replacement on the abandoned image removed.
 */
function settleStaleLock(ctx: RolloutContext, e: Entry, abandoned: ReadonlySet<string>): SettleDecision {
  const node = e.node;
  if (node === undefined) return {};
  const state = ctx.view.stateOf(node);
  let id = replacementOf(e);
  let claim: Record<string, string> = {};
  let surge: Pick<SettleDecision, 'abandoned' | 'reclaimed'> = {};
  if (id === undefined && !state.settled) {
    // A surge made for this node whose claim was lost (drydock stopped right after it): one
    // that joined is claimed now and the node finishes as if it had been; one still booting
    // is removed, or the group would keep it as one instance too many.
    const lost = unclaimedSurgeOf(ctx, e, node, abandoned);
    const lostInst = lost !== undefined ? e.group.byId.get(lost) : undefined;
    if (lost !== undefined && lostInst !== undefined) {
      surge = { abandoned: lost };
      if (ctx.view.nodeByProviderID.get(lostInst.providerID) !== undefined) {
        id = lost;
        claim = { [ANNOTATIONS.replacedBy]: lost };
        surge = { abandoned: lost, reclaimed: lost };
      } else {
        removeReplacement(
          ctx,
          e,
          lost,
          `surged for revision ${state.lock?.revision ?? '?'}, which is no longer desired`,
        );
      }
    }
  }
  const inst = id !== undefined ? e.group.byId.get(id) : undefined;
  const joined = inst !== undefined && ctx.view.nodeByProviderID.get(inst.providerID) !== undefined;
  if (state.settled) {
    const what = state.phase === 'Skipped' ? 'was skipped' : 'failed';
    if (id !== undefined && !joined) removeReplacement(ctx, e, id, `its node ${what} under an older revision`);
    return {
      ...surge,
      ...release(ctx, node, `the spec changed since it ${what}; it starts over under the new revision`),
    };
  }
  if (joined || (e.outdated && (inst === undefined || inst.image === ctx.image.image))) {
    const reason = `${node.name} continues under revision ${ctx.image.revision}`;
    ctx.b.act({
      kind: 'annotateNode',
      spec: ctx.spec,
      node: node.name,
      annotations: { [ANNOTATIONS.operation]: ctx.lock, ...claim },
      reason,
    });
    ctx.b.note(ctx.spec, reason, node.name);
    return { ...surge, adopted: true };
  }
  const why = e.outdated ? 'its replacement runs an image no longer desired' : `it already runs ${ctx.image.image}`;
  if (id !== undefined) removeReplacement(ctx, e, id, why);
  return { ...surge, ...release(ctx, node, why) };
}

/** A node held by this rollout whose instance is gone from its group. */
function settleOrphanNode(ctx: RolloutContext, node: ObservedNode): SettleDecision {
  const phase = ctx.view.stateOf(node).phase;
  if (phase === 'Draining' || phase === 'Cordoned' || phase === 'Verifying') {
    ctx.b.act({
      kind: 'deleteNode',
      spec: ctx.spec,
      node: node.name,
      reason: `${node.name} was ${phase} and its instance is no longer in the scaling group`,
    });
    return {};
  }
  return release(ctx, node, 'its instance is no longer in the scaling group');
}
