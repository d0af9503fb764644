/**
 * The canary wave, one meaning for every kind: the first `wave` nodes of a revision go alone;
 * the rest wait until each of them is done and has been Ready for soakSeconds since it was done
 * (or since it was last Ready, if later). What counts as done is the kind's record of it, which
 * survives another operation taking the node later: a kind reads its own record, never the lock.
 */
import type { ObservedNode } from '../../observe/types.js';
import type { RolloutPolicy } from '../../spec/model.js';
import { compareStrings } from '../order.js';
import { parseInstant } from '../protocol.js';

/** A node the kind's record says is done under this revision, and when. */
export interface DoneNode {
  readonly node: ObservedNode;
  readonly at: number;
}

export interface CanaryProgress {
  readonly policy: RolloutPolicy['canary'];
  /** How many nodes the wave holds: the policy's, or fewer when the spec has fewer. */
  readonly wave: number;
  /** Done under this revision, in any order. */
  readonly done: readonly DoneNode[];
  /** Started under this revision and not finished (Failed and Skipped excluded). */
  readonly inFlight: number;
  /** How the kind says a node is done: "replaced", "done". */
  readonly doneWord: string;
}

/** Done nodes, earliest first (by name on a tie): the canary is the first `wave` of them. */
export function earliestFirst(done: readonly DoneNode[]): DoneNode[] {
  return [...done].sort((a, b) => a.at - b.at || compareStrings(a.node.name, b.node.name));
}

export type CanaryGate =
  | { readonly open: true; readonly limit: number }
  | { readonly open: false; readonly code: 'soak'; readonly reason: string; readonly until?: number };

/** Open for the wave's remaining slots, closed while it runs or soaks; undefined once passed (or none). */
export function canaryGate(p: CanaryProgress, now: number): CanaryGate | undefined {
  if (p.policy === undefined || p.wave <= 0) return undefined;
  const done = earliestFirst(p.done);
  const started = done.length + p.inFlight;
  if (started < p.wave) return { open: true, limit: p.wave - started };
  // More nodes than the wave done under this revision: the gate opened past the canary once, so
  // it passed; a canary node rebooted later by another operation does not close it again.
  if (done.length > p.wave) return undefined;
  if (done.length < p.wave)
    return {
      open: false,
      code: 'soak',
      reason: `canary wave: ${done.length} of ${p.wave} node(s) ${p.doneWord}; the rest wait for it`,
    };
  let until = now;
  for (const { node, at } of done.slice(0, p.wave)) {
    if (!node.ready)
      return {
        open: false,
        code: 'soak',
        reason: `canary node ${node.name} is not Ready; the rest of the rollout waits`,
      };
    until = Math.max(until, Math.max(at, parseInstant(node.readySince) ?? 0) + p.policy.soakSeconds * 1000);
  }
  if (until > now)
    return {
      open: false,
      code: 'soak',
      reason: `canary wave soaking for ${p.policy.soakSeconds}s, until ${new Date(until).toISOString()}`,
      until,
    };
  return undefined;
}

/** Canary nodes the forecast still expects: the wave less the nodes done, while it has not passed. */
export function canaryNodesLeft(p: CanaryProgress, now: number): number {
  const gate = canaryGate(p, now);
  if (gate === undefined) return 0;
  return Math.max(0, p.wave - p.done.length);
}
