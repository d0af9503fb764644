/**
 * What a drain past its timeout, a failed step and a skipped node mean: one meaning for every
 * kind (replace, NodeOp and NodeOpUpgrade, NodeImage inPlace, NodeMaintenance), decided here
 * and nowhere else. A kind only writes what is decided:
 *
 *   drain.onTimeout force     the pods that would not evict are deleted; the drain goes on
 *   drain.onTimeout halt      the node stays cordoned, Failed with the reason; the spec halts
 *                             whatever stopOnFailure says (drydock.dev/halts records it)
 *   drain.onTimeout skipNode  the node is given back: uncordoned if drydock cordoned it, phase
 *                             Skipped with the reason; no failure, so no halt; the rollout
 *                             moves on (a NodeMaintenance, which has no other node, ends there)
 *   any other failed step     Failed with the reason, uncordoned unless onFailure keeps it;
 *                             stopOnFailure decides whether the spec halts
 *
 * A Skipped or Failed node keeps its lock, as the record that this revision is finished with
 * it: it is not started again until a person clears its drydock.dev/ annotations or the spec
 * changes. Neither counts against the cluster budget.
 */
import type { ObservedPod } from '../observe/types.js';
import { ANNOTATIONS } from '../protocol/keys.js';
import type { DrainOptions, IntOrPercent, RolloutPolicy } from '../spec/model.js';
import { plural } from '../words.js';
import { drainLeft, podKey, type DrainView } from './drain.js';
import type { NodeState } from './protocol.js';
import { resolveQuantity } from './quantity.js';
import type { Action, SpecRef } from './types.js';

/** How a node's time with an operation ends when it does not end Done. */
export type NodeOutcome = 'failed' | 'halted' | 'skipped';

/**
 * The failure handling of a spec: rollout.stopOnFailure (a NodeOp's own), or the failure budget
 * rollout.maxFailures that replaces it where given, and rollout.onFailure.
 */
export interface FailurePolicy {
  readonly stopOnFailure: boolean;
  readonly maxFailures?: IntOrPercent;
  readonly onFailure?: RolloutPolicy['onFailure'];
}

/** A kind's failure policy from its stopOnFailure and its rollout's failure budget and onFailure. */
export function failurePolicyOf(
  stopOnFailure: boolean,
  rollout: Pick<FailurePolicy, 'maxFailures' | 'onFailure'>,
): FailurePolicy {
  return {
    stopOnFailure,
    ...(rollout.maxFailures !== undefined ? { maxFailures: rollout.maxFailures } : {}),
    ...(rollout.onFailure ? { onFailure: rollout.onFailure } : {}),
  };
}

/**
 * Whether one failed node halts the spec by itself: stopOnFailure, unless a failure budget is
 * given; then the count of failed nodes decides (failureBudgetHalt).
 */
function eachFailureHalts(policy: FailurePolicy): boolean {
  return policy.maxFailures === undefined && policy.stopOnFailure;
}

/**
 * The failed nodes at which the spec halts, of its `total` nodes: maxFailures (a percentage
 * rounds down, and is at least one node), 1 under stopOnFailure, undefined for never.
 */
export function failureLimit(policy: FailurePolicy, total: number): number | undefined {
  const value = policy.maxFailures;
  if (value === undefined) return policy.stopOnFailure ? 1 : undefined;
  const n = resolveQuantity(value, total, 'down');
  return typeof value === 'string' ? Math.max(1, n) : n;
}

/** Why the spec halts for its failure budget (`failed`: its Failed nodes), or undefined while there is room. */
export function failureBudgetHalt(policy: FailurePolicy, failed: readonly string[], total: number): string | undefined {
  if (policy.maxFailures === undefined) return undefined;
  const limit = failureLimit(policy, total) ?? Number.POSITIVE_INFINITY;
  if (failed.length < limit) return undefined;
  return `maxFailures ${String(policy.maxFailures)}: ${plural(failed.length, 'node')} failed (${failed.join(', ')})`;
}

/** What a status says of the failure budget: "1 of 2 failures allowed …"; undefined without maxFailures. */
export function failureBudgetText(policy: FailurePolicy, failed: number, total: number): string | undefined {
  if (policy.maxFailures === undefined) return undefined;
  const limit = failureLimit(policy, total) ?? 0;
  const of =
    typeof policy.maxFailures === 'string' ? ` (maxFailures ${policy.maxFailures} of ${plural(total, 'node')})` : '';
  return `${failed} of ${limit} failures allowed${of}: the rollout halts ${failed >= limit ? 'now' : `at the ${ordinal(limit)} failed node`}`;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

export interface OutcomeEffect {
  readonly phase: 'Failed' | 'Skipped';
  /** Uncordon the node if drydock cordoned it. */
  readonly uncordon: boolean;
  /** Whether it counts as a failure (status failures, attempts, maxFailures). */
  readonly failure: boolean;
  /** Whether the spec halts: no new node starts. */
  readonly halts: boolean;
  /** What the kind writes on the node with its phase and reason. */
  readonly annotations: Readonly<Record<string, string | null>>;
}

/** What an outcome does to the node and to its spec. */
export function outcomeEffect(policy: FailurePolicy, outcome: NodeOutcome): OutcomeEffect {
  if (outcome === 'halted')
    return {
      phase: 'Failed',
      uncordon: false,
      failure: true,
      halts: true,
      annotations: { [ANNOTATIONS.halts]: 'true' },
    };
  if (outcome === 'skipped') return { phase: 'Skipped', uncordon: true, failure: false, halts: false, annotations: {} };
  return {
    phase: 'Failed',
    uncordon: policy.onFailure !== 'keepCordoned',
    failure: true,
    halts: eachFailureHalts(policy),
    annotations: {},
  };
}

/**
 * Whether a Failed node read back from the cluster halts its spec: under stopOnFailure, when it
 * was a halt, or (marked by a drydock that wrote no drydock.dev/halts yet) when it is still
 * cordoned by drydock although the policy would have uncordoned a failed node.
 */
export function failedNodeHalts(policy: FailurePolicy, state: NodeState): boolean {
  if (state.phase !== 'Failed') return false;
  if (eachFailureHalts(policy) || state.halts) return true;
  return state.keptCordoned && policy.onFailure !== 'keepCordoned';
}

/** What a status says of a Skipped node (named `node`) each round, in every kind. */
export function skippedWait(node: string, state: NodeState): string {
  const reason = state.reason ?? 'skipped (no reason recorded)';
  return `${node} was given back without its operation (${reason}); it is left out of this revision until a person looks (remove its drydock.dev/ annotations to retry it) or the spec changes`;
}

/** A drain that ran past drain.timeoutSeconds, and what drain.onTimeout makes of it. */
export type DrainTimeout =
  | { readonly kind: 'running'; readonly deadline?: number }
  | { readonly kind: 'force'; readonly reason: string; readonly left: readonly ObservedPod[] }
  | { readonly kind: 'halted' | 'skipped'; readonly reason: string; readonly cause: string };

/** Whether the drain (started at `started`) is past its timeout, and what then. */
export function drainTimeout(drain: DrainOptions, view: DrainView, started: number, now: number): DrainTimeout {
  if (drain.timeoutSeconds === undefined) return { kind: 'running' };
  const deadline = started + drain.timeoutSeconds * 1000;
  if (now < deadline) return { kind: 'running', deadline };
  const left = [...view.evict, ...view.remove.map((r) => r.pod), ...view.blocked.map((r) => r.pod)];
  const names = [...left, ...view.terminating].map(podKey).slice(0, 5).join(', ');
  const reason = `drain timed out after ${drain.timeoutSeconds}s with ${drainLeft(view)} pod(s) left (${names})`;
  if (drain.onTimeout === 'force') return { kind: 'force', reason, left };
  if (drain.onTimeout === 'skipNode') return { kind: 'skipped', reason: `skipped: ${reason}`, cause: reason };
  return { kind: 'halted', reason: `halted: ${reason}; drain.onTimeout is halt`, cause: reason };
}

/** onTimeout force: every pod left is deleted (no eviction, so no PDB holds it any longer). */
export function forcedDeletes(
  spec: SpecRef,
  node: string,
  drain: DrainOptions,
  timeout: Extract<DrainTimeout, { kind: 'force' }>,
): Action[] {
  const grace = drain.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: drain.gracePeriodSeconds } : {};
  return timeout.left.map((pod) => ({
    kind: 'deletePod',
    spec,
    node,
    namespace: pod.namespace,
    pod: pod.name,
    ...grace,
    reason: `${timeout.reason}; drain.onTimeout force`,
  }));
}

/** When the node's drain started: when it entered its phase, or now. */
export function drainStarted(state: NodeState, now: number): number {
  return state.since ?? now;
}
