/**
 * A replace rollout's SpecStatus: phase, progress, conditions and one row per instance, all
 * read off this round's context and the waits already decided, never re-derived.
 */
import { ANNOTATIONS } from '../observe/types.js';
import { holdsLock, nodePhase } from './protocol.js';
import { ownership, type RolloutContext } from './rollout.js';
import type { Condition, NodeRow, SpecPhase, SpecStatus, Wait } from './types.js';

/** Wait codes that need a person: nothing changes by itself. */
const STALLING = new Set<Wait['code']>(['approval', 'halted', 'lock']);

export function specPhase(ctx: RolloutContext, actions: number, inFlight: number): SpecPhase {
  if (ctx.haltReason !== undefined) return 'Halted';
  if (isComplete(ctx) && actions === 0) return 'Complete';
  if (actions > 0 || inFlight > 0) return 'Progressing';
  return 'Waiting';
}

export function isComplete(ctx: RolloutContext): boolean {
  if (ctx.blockedGroups > 0) return false;
  for (const e of ctx.entries) {
    if (e.outdated) return false;
    if (e.node !== undefined && ownership(ctx, e.node) !== 'none' && ownership(ctx, e.node) !== 'foreign') return false;
  }
  return true;
}

export function progress(ctx: RolloutContext): { done: number; total: number } {
  let done = 0;
  let total = 0;
  for (const g of ctx.groups) {
    let n = 0;
    for (const e of ctx.entries) {
      if (e.group !== g || e.outdated || e.node === undefined || !e.node.ready) continue;
      if (ctx.view.claimed.has(e.instance.id)) continue;
      n++;
    }
    done += Math.min(n, g.base);
    total += g.base;
  }
  return { done, total };
}

export function nodeRows(ctx: RolloutContext, waits: readonly Wait[]): NodeRow[] {
  const waitByNode = new Map<string, string>();
  for (const w of waits) if (w.node !== undefined && !waitByNode.has(w.node)) waitByNode.set(w.node, w.reason);
  return ctx.entries.map((e): NodeRow => {
    const node = e.node;
    const base = { node: node?.name ?? e.instance.id, instance: e.instance.id, image: e.instance.image };
    if (node === undefined) return { ...base, phase: 'Joining', since: e.instance.createdAt };
    const ours = holdsLock(node) && ownership(ctx, node) !== 'foreign';
    const message = ctx.nodeMessages.get(node.name) ?? waitByNode.get(node.name);
    const replacedBy = node.annotations[ANNOTATIONS.replacedBy];
    const phase: NodeRow['phase'] = ours ? (nodePhase(node) ?? 'Pending') : !node.ready ? 'Joining' : e.outdated ? 'Outdated' : 'UpToDate';
    const since = ours ? node.annotations[ANNOTATIONS.phaseSince] : undefined;
    return {
      ...base,
      phase,
      ...(since !== undefined ? { since } : {}),
      ...(ours && replacedBy !== undefined ? { replacedBy } : {}),
      ...(message !== undefined ? { message } : {}),
    };
  });
}

export function conditions(phase: SpecPhase, waits: readonly Wait[], ctx: RolloutContext): Condition[] {
  const first = waits[0];
  const message = ctx.haltReason ?? first?.reason ?? (phase === 'Complete' ? `every node runs ${ctx.image.image}` : 'replacing nodes');
  const stalled = phase === 'Halted' || waits.some((w) => STALLING.has(w.code));
  return [
    { type: 'Ready', status: phase === 'Complete' ? 'True' : 'False', reason: phase, message },
    { type: 'Progressing', status: phase === 'Progressing' ? 'True' : 'False', reason: phase, message },
    {
      type: 'Stalled',
      status: stalled ? 'True' : 'False',
      reason: stalled ? (phase === 'Halted' ? 'Halted' : (waits.find((w) => STALLING.has(w.code))?.code ?? 'Stalled')) : 'NotStalled',
      message: stalled ? (ctx.haltReason ?? waits.find((w) => STALLING.has(w.code))?.reason ?? message) : '',
    },
  ];
}

export function buildStatus(ctx: RolloutContext, actions: number, inFlight: number, waits: readonly Wait[]): SpecStatus {
  const phase = specPhase(ctx, actions, inFlight);
  const first = waits[0];
  return {
    spec: ctx.spec,
    revision: ctx.image.revision,
    phase,
    progress: progress(ctx),
    failures: ctx.failures,
    conditions: conditions(phase, waits, ctx),
    nodes: nodeRows(ctx, waits),
    pending: [...ctx.pending].sort((a, b) => (a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0)),
    ...(first !== undefined ? { waitingFor: first.reason } : {}),
    ...(ctx.haltReason !== undefined || ctx.lastError !== undefined ? { lastError: ctx.haltReason ?? ctx.lastError } : {}),
  };
}
