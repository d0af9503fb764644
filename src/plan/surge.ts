/**
 * Replacement instances for started nodes. New-image instances nobody has claimed yet are
 * handed to started nodes lacking a replacement, oldest instance to first node; only then is
 * new capacity asked for. This is what makes surge crash-safe: instances surged just before a
 * crash are simply claimed in the next round (an instance counts as a node's surge only if it
 * was created after the node was started, so established nodes are never taken).
 */
import { ANNOTATIONS } from '../observe/types.js';
import { compareStrings } from './order.js';
import { holdsLock, nodePhase, parseInstant } from './protocol.js';
import type { Entry, GroupState, RolloutContext } from './rollout.js';

function lockedAt(ctx: RolloutContext, e: Entry): number {
  if (e.node === undefined || ctx.startedNow.has(e.node.name)) return ctx.now;
  return parseInstant(e.node.annotations[ANNOTATIONS.phaseSince]) ?? ctx.now;
}

/** Replacements in flight in a group: claimed by a node still being replaced. */
function claimedInFlight(ctx: RolloutContext, g: GroupState): number {
  let n = 0;
  for (const e of ctx.entries) {
    if (e.group !== g || e.node === undefined || !holdsLock(e.node) || nodePhase(e.node) === 'Failed') continue;
    const id = e.node.annotations[ANNOTATIONS.replacedBy];
    if (id !== undefined && g.byId.has(id)) n++;
  }
  return n;
}

export function claimAndSurge(ctx: RolloutContext): void {
  const { b, spec, view, image } = ctx;
  for (const g of ctx.groups) {
    const needers = ctx.needers.filter((e) => e.group === g);
    if (needers.length === 0) continue;
    const orphans = [...g.byId.values()]
      .filter((inst) => {
        if (inst.image !== image.image || view.claimed.has(inst.id)) return false;
        const node = view.nodeByProviderID.get(inst.providerID);
        return node === undefined || node.annotations[ANNOTATIONS.replaces] === undefined;
      })
      .map((inst) => ({ inst, created: parseInstant(inst.createdAt) ?? Number.NEGATIVE_INFINITY }))
      .sort((x, y) => x.created - y.created || compareStrings(x.inst.id, y.inst.id));
    const unserved: Entry[] = [];
    for (const e of needers) {
      const from = lockedAt(ctx, e) - ctx.options.skewMs;
      const i = orphans.findIndex((o) => o.created >= from);
      const node = e.node;
      const found = orphans[i];
      if (found === undefined || node === undefined) {
        unserved.push(e);
        continue;
      }
      orphans.splice(i, 1);
      b.act({ kind: 'annotateNode', spec, node: node.name, annotations: { [ANNOTATIONS.replacedBy]: found.inst.id } });
    }
    if (unserved.length === 0) continue;
    // Unclaimed new instances younger than the oldest started node are surges on their way
    // to a claim; counting them keeps a crash from surging twice.
    const oldestLock = Math.min(...needers.map((e) => lockedAt(ctx, e))) - ctx.options.skewMs;
    const inFlight = claimedInFlight(ctx, g) + orphans.filter((o) => o.created >= oldestLock).length;
    const count = Math.min(unserved.length, g.maxSurge - inFlight);
    if (count > 0) {
      const forNodes = unserved.slice(0, count).flatMap((e) => (e.node ? [e.node.name] : []));
      b.act({ kind: 'surge', spec, groupId: g.group.groupId, count, forNodes });
    }
    if (unserved.length > count) {
      b.wait(spec, 'surge', `${unserved.length - Math.max(0, count)} started node(s) in ScalingGroup ${g.sg.name} wait for a replacement instance (maxSurge ${g.maxSurge}, ${inFlight} in flight)`);
    }
  }
}
