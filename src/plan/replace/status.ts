/**
 * A replace rollout's SpecStatus: phase, progress, conditions and one row per instance, all
 * read off this round's context and the waits already decided, never re-derived.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import { approvalRef, approvalsInForce, imageTarget } from '../approval.js';
import { parseInstant } from '../protocol.js';
import { ownership, since, type RolloutContext } from './context.js';
import { inFlightTotal, type Tally } from './tally.js';
import { specConditions, waitByNode } from '../sequence/status.js';
import type { NodeRow, SpecPhase, SpecStatus, Wait } from '../types.js';

/**
 * `actions` counts what the rollout does this round; a group image set while the start gate
 * holds every node is not counted by the caller (planReplace), so that round says Waiting with
 * the gate's reason.
 */
export function specPhase(ctx: RolloutContext, tally: Tally, actions: number, inFlight: number): SpecPhase {
  if (tally.haltReason !== undefined) return 'Halted';
  if (isComplete(ctx) && actions === 0) return 'Complete';
  if (actions > 0 || inFlight > 0) return 'Progressing';
  return 'Waiting';
}

export function isComplete(ctx: RolloutContext): boolean {
  if (ctx.blockedGroups > 0) return false;
  for (const e of ctx.entries) {
    if (e.outdated) return false;
    if (e.node !== undefined && ownership(ctx, e.node) !== 'free' && ownership(ctx, e.node) !== 'foreign') return false;
  }
  return true;
}

/**
 * Surges on their way to a claim: unclaimed desired-image instances that are no finished
 * replacement, made after a started node of the group that has no replacement yet (oldest
 * first, at most one per such node).
 */
function pendingSurges(ctx: RolloutContext, tally: Tally, g: RolloutContext['groups'][number]): Set<string> {
  const needers = tally.needers.filter((e) => e.group === g && e.node !== undefined);
  const out = new Set<string>();
  if (needers.length === 0) return out;
  let from = Number.POSITIVE_INFINITY;
  for (const e of needers) if (e.node !== undefined) from = Math.min(from, since(ctx, e.node));
  from -= ctx.options.skewMs;
  const fresh = [...g.byId.values()]
    .filter((inst) => {
      if (inst.image !== ctx.image.image || ctx.view.claimed.has(inst.id)) return false;
      if (ctx.view.nodeByProviderID.get(inst.providerID)?.annotations[ANNOTATIONS.replaces] !== undefined) return false;
      const created = parseInstant(inst.createdAt);
      return created !== undefined && created >= from;
    })
    .sort((x, y) => (x.createdAt < y.createdAt ? -1 : x.createdAt > y.createdAt ? 1 : x.id < y.id ? -1 : 1));
  for (const inst of fresh.slice(0, needers.length)) out.add(inst.id);
  return out;
}

/**
 * Done out of the group's slots: its size before the rollout, stable all through it. A slot is
 * a live instance that is no replacement in flight (claimed, or surged and not claimed yet);
 * a replacement becomes a slot once its old instance is gone. Counted from the instances, not
 * the group's target size, which includes surges the moment they are asked for.
 */
export function progress(ctx: RolloutContext, tally: Tally): { done: number; total: number } {
  let done = 0;
  let total = 0;
  // A group whose image is set this round counts too: its nodes are the rollout's, none done
  // yet, and a total without them would report the first round of a revision as 0/0.
  const entries = [...ctx.entries, ...ctx.upcoming];
  for (const g of [...ctx.groups, ...ctx.upcomingGroups]) {
    const surging = pendingSurges(ctx, tally, g);
    let slots = 0;
    let n = 0;
    for (const e of entries) {
      if (e.group !== g || ctx.view.claimed.has(e.instance.id) || surging.has(e.instance.id)) continue;
      slots++;
      if (e.outdated || e.node === undefined || !(e.node.ready || isMarked(e))) continue;
      n++;
    }
    done += Math.min(n, slots);
    total += slots;
  }
  return { done, total };
}

/**
 * A replacement marked Done (drydock.dev/replaces): it passed its health gate once, so it is
 * done for the rollout even while another operation reboots it (NotReady for a while).
 */
function isMarked(e: RolloutContext['entries'][number]): boolean {
  return e.node?.annotations[ANNOTATIONS.replaces] !== undefined;
}

export function nodeRows(ctx: RolloutContext, tally: Tally, waits: readonly Wait[]): NodeRow[] {
  const byNode = waitByNode(waits);
  return ctx.entries.map((e): NodeRow => {
    const node = e.node;
    const base = { node: node?.name ?? e.instance.id, instance: e.instance.id, image: e.instance.image };
    if (node === undefined) return { ...base, phase: 'Joining', since: e.instance.createdAt };
    const state = ctx.view.stateOf(node);
    const ours = state.holds && ownership(ctx, node) !== 'foreign';
    // A node that joined once and is NotReady now (another operation reboots it) is not joining.
    const joining = !node.ready && !isMarked(e) && !e.outdated;
    const notReady =
      !node.ready && !joining ? `not Ready${state.holds ? ` (held by ${state.lockText ?? '?'})` : ''}` : undefined;
    const message = tally.messages.get(node.name) ?? byNode.get(node.name) ?? notReady;
    const replacedBy = node.annotations[ANNOTATIONS.replacedBy];
    const phase: NodeRow['phase'] = ours
      ? (state.phase ?? 'Pending')
      : joining
        ? 'Joining'
        : e.outdated
          ? 'Outdated'
          : 'UpToDate';
    const entered = ours ? state.sinceText : undefined;
    return {
      ...base,
      phase,
      ...(entered !== undefined ? { since: entered } : {}),
      ...(ours && replacedBy !== undefined ? { replacedBy } : {}),
      ...(message !== undefined ? { message } : {}),
    };
  });
}

export function buildStatus(ctx: RolloutContext, tally: Tally, actions: number, waits: readonly Wait[]): SpecStatus {
  const phase = specPhase(ctx, tally, actions, inFlightTotal(tally));
  const first = waits[0];
  const approvals = approvalsInForce(ctx.desired, imageTarget(ctx.image));
  return {
    spec: ctx.spec,
    revision: ctx.image.revision,
    phase,
    progress: progress(ctx, tally),
    failures: tally.failures,
    conditions: specConditions(
      phase,
      tally.haltReason ??
        first?.reason ??
        (phase === 'Complete' ? `every node runs ${ctx.image.image}` : 'replacing nodes'),
      waits,
      tally.haltReason,
    ),
    nodes: nodeRows(ctx, tally, waits),
    pending: [...tally.pending].sort((a, b) =>
      a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0,
    ),
    ...(first !== undefined ? { waitingFor: first.reason } : {}),
    ...(first?.approval !== undefined ? { approvalWanted: first.approval } : {}),
    ...(tally.haltReason !== undefined || tally.lastError !== undefined
      ? { lastError: tally.haltReason ?? tally.lastError }
      : {}),
    ...(approvals.length > 0 ? { approvals: approvals.map(approvalRef) } : {}),
  };
}
