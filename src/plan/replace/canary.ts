/**
 * The canary wave: the first `canary.nodes` nodes of a revision are replaced alone; the rest
 * wait until every canary replacement is Done and has been Ready for soakSeconds. Which nodes
 * were the canary is read back from the cluster: the replacement nodes whose record
 * (nodeimage.drydock.dev/<name>) names this revision, earliest first (their old nodes are gone
 * by then). The record, not the lock, because another operation may take a replacement once it
 * is Done (a NodeOp over the workers) and its lock then overwrites this rollout's; the canary
 * must not shrink because of it, or a new canary would start before its approval.
 */
import { ANNOTATIONS } from '../../protocol/keys.js';
import { readReplacementRecord } from '../protocol.js';
import type { CanaryProgress, DoneNode } from '../sequence/canary.js';
import type { RolloutContext } from './context.js';

/** Replacement nodes finished under the current revision, in any order. */
export function doneReplacements(ctx: RolloutContext): DoneNode[] {
  const out: DoneNode[] = [];
  for (const e of ctx.entries) {
    const n = e.node;
    if (n === undefined) continue;
    if (n.annotations[ANNOTATIONS.replaces] === undefined) continue;
    const at = doneAt(ctx, n);
    if (at !== undefined) out.push({ node: n, at });
  }
  return out;
}

/**
 * When the replacement was marked Done under this revision, or undefined when it was not: its
 * record, or (marked by a drydock that wrote no record yet) this revision's Done lock.
 */
function doneAt(ctx: RolloutContext, n: DoneNode['node']): number | undefined {
  const record = readReplacementRecord(n, ctx.image.name);
  if (record !== undefined) return record.revision === ctx.image.revision ? record.doneAt : undefined;
  const state = ctx.view.stateOf(n);
  if (state.lockText !== ctx.lock || state.phase !== 'Done') return undefined;
  return state.since ?? 0;
}

/** The rollout's canary as the shared gate reads it (sequence/canary.ts). */
export function canaryProgress(ctx: RolloutContext, inFlight: number): CanaryProgress {
  const policy = ctx.image.rollout.canary;
  return { policy, wave: policy?.nodes ?? 0, done: doneReplacements(ctx), inFlight, doneWord: 'replaced' };
}
