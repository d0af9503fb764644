/**
 * The canary wave: the first `canary.nodes` nodes of a revision are replaced alone; the rest
 * wait until every canary replacement is Done and has been Ready for soakSeconds. Which nodes
 * were the canary is read back from the cluster: the replacement nodes whose record
 * (nodeimage.drydock.dev/<name>) names this revision, earliest first (their old nodes are gone
 * by then). The record, not the lock, because another operation may take a replacement once it
 * is Done (a NodeOp over the workers) and its lock then overwrites this rollout's; the canary
 * must not shrink because of it, or a new canary would start before its approval.
 */
import type { ObservedNode } from '../../observe/types.js';
import { ANNOTATIONS } from '../../protocol/keys.js';
import { compareStrings } from '../order.js';
import { parseInstant, readReplacementRecord } from '../protocol.js';
import type { RolloutContext } from './context.js';

export type CanaryState =
  | { readonly stage: 'none' }
  /** Canary nodes may still start: this many. */
  | { readonly stage: 'starting'; readonly slots: number }
  | { readonly stage: 'waiting'; readonly reason: string; readonly until?: number }
  | { readonly stage: 'passed' };

/** Replacement nodes finished under the current revision, earliest first. */
export function doneReplacements(ctx: RolloutContext): ObservedNode[] {
  const out: { node: ObservedNode; at: number }[] = [];
  for (const e of ctx.entries) {
    const n = e.node;
    if (n === undefined) continue;
    if (n.annotations[ANNOTATIONS.replaces] === undefined) continue;
    const at = doneAt(ctx, n);
    if (at !== undefined) out.push({ node: n, at });
  }
  out.sort((a, b) => a.at - b.at || compareStrings(a.node.name, b.node.name));
  return out.map((x) => x.node);
}

/**
 * When the replacement was marked Done under this revision, or undefined when it was not: its
 * record, or (marked by a drydock that wrote no record yet) this revision's Done lock.
 */
function doneAt(ctx: RolloutContext, n: ObservedNode): number | undefined {
  const record = readReplacementRecord(n, ctx.image.name);
  if (record !== undefined) return record.revision === ctx.image.revision ? record.doneAt : undefined;
  if (n.annotations[ANNOTATIONS.operation] !== ctx.lock || n.annotations[ANNOTATIONS.phase] !== 'Done')
    return undefined;
  return parseInstant(n.annotations[ANNOTATIONS.phaseSince]) ?? 0;
}

export function canaryState(ctx: RolloutContext, inFlight: number): CanaryState {
  const canary = ctx.image.rollout.canary;
  if (canary === undefined || canary.nodes <= 0) return { stage: 'none' };
  const done = doneReplacements(ctx);
  const started = done.length + inFlight;
  if (started < canary.nodes) return { stage: 'starting', slots: canary.nodes - started };
  if (done.length < canary.nodes) {
    return {
      stage: 'waiting',
      reason: `canary wave: ${done.length} of ${canary.nodes} node(s) replaced; the rest wait for it`,
    };
  }
  let until = ctx.now;
  for (const node of done.slice(0, canary.nodes)) {
    if (!node.ready)
      return { stage: 'waiting', reason: `canary node ${node.name} is not Ready; the rest of the rollout waits` };
    const from = Math.max(doneAt(ctx, node) ?? 0, parseInstant(node.readySince) ?? 0);
    until = Math.max(until, from + canary.soakSeconds * 1000);
  }
  if (until > ctx.now) {
    return {
      stage: 'waiting',
      reason: `canary wave soaking for ${canary.soakSeconds}s, until ${new Date(until).toISOString()}`,
      until,
    };
  }
  return { stage: 'passed' };
}
