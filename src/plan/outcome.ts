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
import type { DrainOptions, RolloutPolicy } from '../spec/model.js';
import { drainLeft, podKey, type DrainView } from './drain.js';
import type { NodeState } from './protocol.js';
import type { Action, SpecRef } from './types.js';

/** How a node's time with an operation ends when it does not end Done. */
export type NodeOutcome = 'failed' | 'halted' | 'skipped';

/** The failure handling of a spec: rollout.stopOnFailure (a NodeOp's own) and rollout.onFailure. */
export interface FailurePolicy {
  readonly stopOnFailure: boolean;
  readonly onFailure?: RolloutPolicy['onFailure'];
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
    halts: policy.stopOnFailure,
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
  if (policy.stopOnFailure || state.halts) return true;
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
