/**
 * What a replace round's steps decide about each node, returned by the step and folded here
 * into the round's tally; no step writes into a shared bag. The stages run in order and each
 * reads only what the earlier ones returned:
 *
 *   settle (adopted, released, abandoned, reclaimed) → advance (Decided per node, folded into a
 *   Tally) → start (the nodes started) → claim and surge → status
 */
import type { HandOver } from '../sequence/admit.js';
import type { PendingNode } from '../types.js';
import type { Entry } from './context.js';

/** What the settle stage decided about the locks older rounds or revisions left. */
export interface Settled {
  /** Stale-revision nodes taken over under the current revision. */
  readonly adopted: ReadonlySet<string>;
  /** Nodes released (annotations cleared): nobody starts them again this round. */
  readonly released: ReadonlySet<string>;
  /** Instances removed as surges made for a revision no longer desired. */
  readonly abandoned: ReadonlySet<string>;
  /** Replacements claimed for adopted nodes (node name to instance id). */
  readonly reclaimed: ReadonlyMap<string, string>;
}

/** What one step decided about one node. */
export interface Decided {
  /** The node is started and not finished: it counts in flight in its group. */
  readonly inFlight?: boolean;
  /** Failures counted for the node (recorded ones and this round's). */
  readonly failures?: number;
  /** What its status row says, when not its first wait. */
  readonly message?: string;
  /** Why the rollout halts because of it. */
  readonly halt?: string;
  /** The node is Failed for good (not to be tried again): it counts against maxFailures. */
  readonly failed?: string;
  readonly lastError?: string;
  /** A cloud instance joining for it or leaving with it. */
  readonly pending?: PendingNode;
  /** It is Pending without a replacement instance: claim or surge one. */
  readonly needsReplacement?: boolean;
  /** Replaced: its instance is removed this round, and it hands its slot to a node started after. */
  readonly finished?: HandOver;
}

/** Two decisions about the same node, `b` after `a`: failures add up, the first halt and error stand. */
export function and(a: Decided, b: Decided): Decided {
  const halt = a.halt ?? b.halt;
  const failed = a.failed ?? b.failed;
  const lastError = a.lastError ?? b.lastError;
  const message = b.message ?? a.message;
  const pending = b.pending ?? a.pending;
  const failures = (a.failures ?? 0) + (b.failures ?? 0);
  return {
    ...(a.inFlight === true || b.inFlight === true ? { inFlight: true } : {}),
    ...(failures > 0 ? { failures } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(halt !== undefined ? { halt } : {}),
    ...(failed !== undefined ? { failed } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
    ...(pending !== undefined ? { pending } : {}),
    ...(a.needsReplacement === true || b.needsReplacement === true ? { needsReplacement: true } : {}),
    ...((b.finished ?? a.finished) !== undefined ? { finished: b.finished ?? a.finished } : {}),
  };
}

/** The round's view of its nodes once every started node has taken its step. */
export interface Tally {
  /** Current-revision nodes started and not finished (Failed excluded), per groupId. */
  readonly inFlight: ReadonlyMap<string, number>;
  /** Nodes in Pending that need a replacement instance, in rollout order. */
  readonly needers: readonly Entry[];
  readonly messages: ReadonlyMap<string, string>;
  readonly pending: readonly PendingNode[];
  readonly failures: number;
  /** The nodes Failed for good, in rollout order: what maxFailures counts. */
  readonly failedNodes: readonly string[];
  readonly haltReason?: string;
  /** The first failure seen this round, for the status' lastError. */
  readonly lastError?: string;
  /** Nodes replaced this round (still in flight), in rollout order: each hands its slot over. */
  readonly handOvers: readonly HandOver[];
}

/** Folds the steps' decisions, in rollout order. */
export function fold(decisions: readonly { readonly entry: Entry; readonly decided: Decided }[]): Tally {
  const inFlight = new Map<string, number>();
  const needers: Entry[] = [];
  const messages = new Map<string, string>();
  const pending: PendingNode[] = [];
  let failures = 0;
  const failedNodes: string[] = [];
  let haltReason: string | undefined;
  let lastError: string | undefined;
  const handOvers: HandOver[] = [];
  for (const { entry, decided: d } of decisions) {
    const groupId = entry.group.group.groupId;
    if (d.inFlight === true) inFlight.set(groupId, (inFlight.get(groupId) ?? 0) + 1);
    if (d.needsReplacement === true) needers.push(entry);
    if (d.message !== undefined && entry.node !== undefined) messages.set(entry.node.name, d.message);
    if (d.pending !== undefined) pending.push(d.pending);
    failures += d.failures ?? 0;
    if (d.failed !== undefined) failedNodes.push(d.failed);
    haltReason ??= d.halt;
    lastError ??= d.lastError;
    if (d.finished !== undefined) handOvers.push(d.finished);
  }
  return {
    inFlight,
    handOvers,
    needers,
    messages,
    pending,
    failures,
    failedNodes,
    ...(haltReason !== undefined ? { haltReason } : {}),
    ...(lastError !== undefined ? { lastError } : {}),
  };
}

export function inFlightTotal(tally: Pick<Tally, 'inFlight'>): number {
  let n = 0;
  for (const v of tally.inFlight.values()) n += v;
  return n;
}

/** The tally once the start stage has locked `started`: each in flight, each needing a replacement. */
export function withStarted(tally: Tally, started: readonly Entry[]): Tally {
  if (started.length === 0) return tally;
  const inFlight = new Map(tally.inFlight);
  for (const e of started) inFlight.set(e.group.group.groupId, (inFlight.get(e.group.group.groupId) ?? 0) + 1);
  return { ...tally, inFlight, needers: [...tally.needers, ...started] };
}
